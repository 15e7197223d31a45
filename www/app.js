// The Kiln inspector: plain ES modules over the inspector's module
// (kiln-wasm-inspect in www/inspect/: the core module kiln-wasm, plus the
// safetensors and GGUF heads; built by `bash scripts/www.sh --build-only`). A file is never read whole: the
// worker (worker.js) opens it by ranges (a File's slice(), or HTTP Range
// requests for a URL), reading only what the core's checker needs, and
// reads a tensor's bytes in chunks for its values and statistics.
import init, { peekFrame, schemaHash, setPlace, sniffFormat } from './inspect/kiln_inspect.js';
import { openSet, setOrder } from './set.js';
import { setupCompare } from './compare.js';

const $ = (id) => document.getElementById(id);
const ROW = 26;
const state = {
  file: null, source: null, name: '', tensors: [], dirs: [], rows: [], sort: { key: 'index', dir: 1 },
  selected: -1, job: 0, samples: [], scaleOf: new Map(), io: null, openMs: 0, format: 'kiln',
};
const FORMAT_NAMES = { kiln: 'Kiln', safetensors: 'safetensors', gguf: 'GGUF' };
const foreign = () => state.format !== 'kiln';
window.kilnInspector = state; // for the end-to-end tests and the console

const columns = [
  { key: 'name', label: 'Name' }, { key: 'dtype', label: 'Dtype' }, { key: 'shape', label: 'Shape' },
  { key: 'elements', label: 'Elements', num: true }, { key: 'byteLength', label: 'Bytes', num: true },
  { key: 'byteOffset', label: 'Offset', num: true }, { key: 'quant', label: 'Quantization' }, { key: 'layout', label: 'Layout' },
  { key: 'fileName', label: 'File', set: true },
];
// The File column shows only for a set of several files; there, the
// Quantization and Layout columns only when a tensor has them.
const isSet = () => (state.file?.files?.length ?? 0) > 1;
const setPlain = () => isSet() && !state.tensors.some((t) => t.quantScheme || t.layout);
const shownColumns = () => columns.filter((c) => (!c.set || isSet()) && !(setPlain() && (c.key === 'quant' || c.key === 'layout')));
const setClass = () => (isSet() ? ` with-file${setPlain() ? ' plain' : ''}` : '');

// ---------------------------------------------------------------- formatting

const intFmt = new Intl.NumberFormat('en-US');
function fmtNum(x) {
  if (typeof x === 'bigint') return x.toString();
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const a = Math.abs(x);
  // Under 0.01, six significant digits would need up to 11 characters
  // and be cut in the value grid: the exponent form stays short.
  if (a !== 0 && (a < 1e-2 || a >= 1e7)) return x.toExponential(3);
  return String(Number(x.toPrecision(6)));
}
function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}
const hex = (n, w = 0) => '0x' + n.toString(16).padStart(w, '0');
const shapeText = (s) => `[${s.join(', ')}]`;
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) e.append(kid instanceof Node ? kid : String(kid));
  return e;
}
const tick = () => new Promise((r) => setTimeout(r, 0));

// ---------------------------------------------------------------- the reader

// Every read of the file happens in the worker (www/worker.js): the page
// gets the facts, the values and the statistics as plain objects.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const workerReady = new Promise((resolve) => { worker.addEventListener('message', ({ data }) => { if (data.ready) resolve(); }, { once: true }); });
let nextId = 1;
const pending = new Map();
const progress = new Map();
worker.addEventListener('message', ({ data }) => {
  if (data.ready) return;
  if (data.progress !== undefined) { progress.get(data.job)?.(data); return; }
  const done = pending.get(data.id);
  pending.delete(data.id);
  if (data.io) state.io = data.io;
  if (data.tensorsJson) {
    // An open's tensors come as one transferred JSON buffer, parsed here once.
    const t0 = performance.now();
    data.tensors = JSON.parse(new TextDecoder().decode(data.tensorsJson));
    delete data.tensorsJson;
    data.parseMs = performance.now() - t0;
    data.postMs = performance.timeOrigin + t0 - data.postedAt;
  }
  done?.(data);
});
function call(msg) {
  return new Promise((resolve) => { const id = nextId++; pending.set(id, resolve); worker.postMessage({ ...msg, id }); });
}

// ---------------------------------------------------------------- opening

function setMode(mode, type) {
  const input = $('type-text');
  $('mode').value = mode;
  if (mode === 'directory' && !input.disabled) { input.dataset.last = input.value; input.value = ''; }
  if (mode !== 'directory' && input.disabled && !input.value) input.value = input.dataset.last ?? '';
  input.disabled = mode === 'directory';
  if (type !== undefined && mode !== 'directory') input.value = type;
}

/** Sets the mode (and a bundled type whose hash the frame carries) from the first 16 bytes. */
function sniff(head) {
  // The module says the format (sniffFormat): a safetensors or GGUF file
  // opens from its head, with no type text.
  state.format = sniffFormat(head) ?? 'kiln';
  if (foreign()) return;
  const magic = String.fromCharCode(...head.subarray(0, 4));
  if (magic === 'KLNT') setMode('directory');
  else if (peekFrame(head)) {
    // The module reads the frame (peekFrame): the page never parses a
    // frame header itself.
    setMode('framed');
    const match = state.samples.find((s) => s.framed && hashMatches(head, s.type));
    if (match) $('type-text').value = match.type;
  } else if ($('mode').value === 'directory') setMode('plain');
}

async function openFile(file) {
  setBusy(`Reading ${file.name}…`);
  sniff(new Uint8Array(await file.slice(0, 16).arrayBuffer()));
  openSource({ blob: file }, file.name);
}

/** One file, or several as one model (shards, or a model in several files). */
async function openFiles(list) {
  $('url-input').value = ''; // the field names what is open: a file from disk has no URL
  if (list.length === 1 && !list[0].name.endsWith('.index.json')) return openFile(list[0]);
  const job = ++state.job;
  setBusy(`Reading ${list.length} files\u2026`);
  $('welcome').hidden = true;
  state.source = { set: list };
  state.name = `${list.length} files`;
  $('reopen').disabled = false;
  await workerReady;
  const t0 = performance.now();
  const r = await openSet(setOrder(list), { call, typeOf });
  if (job !== state.job) return;
  state.openMs = performance.now() - t0;
  if (r.error) { showError(r.error, r.hex, r.length, r.name); return; }
  state.file = r; state.openIo = r.io; state.checkMs = r.checkMs; state.name = r.title;
  showFile();
}

/** A file's type text and framing, from its first 16 bytes and the page's fields. */
async function typeOf(blob) {
  sniff(new Uint8Array(await blob.slice(0, 16).arrayBuffer()));
  const mode = $('mode').value;
  return { type: mode === 'directory' ? 'tensors' : $('type-text').value.trim(), framed: mode === 'framed', format: state.format };
}

function hashMatches(head, type) {
  try { return peekFrame(head)?.hash === schemaHash(type); } catch { return false; }
}

async function openSample(name) {
  const meta = state.samples.find((s) => s.file === name);
  if (!meta) return;
  $('url-input').value = '';
  setBusy(`Loading ${name}…`);
  const blob = await (await fetch(`samples/${name}`)).blob();
  state.format = sniffFormat(new Uint8Array(await blob.slice(0, 16).arrayBuffer())) ?? 'kiln';
  setMode(meta.type === 'tensors' && !meta.framed ? 'directory' : meta.framed ? 'framed' : 'plain', meta.type);
  openSource({ blob }, name);
}

/** Opens a remote file by HTTP Range requests (only what is shown is transferred). */
async function openUrl(url, name, mode, type) {
  setBusy(`Opening ${url}…`);
  state.job++;
  $('welcome').hidden = true;
  if (mode) { state.format = 'kiln'; setMode(mode, type ?? ''); }
  else {
    try {
      const r = await fetch(url, { headers: { Range: 'bytes=0-15' } });
      if (r.status === 206) sniff(new Uint8Array(await r.arrayBuffer()));
      else r.body?.cancel();
    } catch { /* the worker's open says why */ }
  }
  openSource({ url: new URL(url, location.href).href }, name ?? url);
}

function setBusy(text) { document.body.dataset.state = 'loading'; document.title = text; }

async function openSource(src, name) {
  const job = ++state.job;
  state.source = src; state.name = name;
  $('reopen').disabled = false;
  const mode = $('mode').value;
  const type = mode === 'directory' ? 'tensors' : $('type-text').value.trim();
  $('welcome').hidden = true;
  if (!type && !foreign()) {
    showError({ code: 'BadTypeText', message: 'Type the message\u2019s type text, or pick a bundled one.' }, null, undefined, name);
    return;
  }
  const t0 = performance.now();
  await workerReady;
  const r = await call({ op: 'open', ...src, type, framed: mode === 'framed', format: state.format });
  if (job !== state.job) return;
  state.openMs = performance.now() - t0;
  if (r.error) { showError(r.error, r.hex, r.length, name); return; }
  state.file = r;
  state.openIo = r.io;
  state.checkMs = r.checkMs;
  showFile();
}

function reopen() { if (state.source?.set) openFiles(state.source.set); else if (state.source) openSource(state.source, state.name); }

// ---------------------------------------------------------------- errors

function showError(e, hexView, length, name) {
  $('file').hidden = true;
  $('error').hidden = false;
  $('error-code').textContent = e.code ?? 'Error';
  const unread = ['Network', 'NoRange', 'Http', 'Io'].includes(e.code);
  $('error').querySelector('h2').textContent = unread ? 'The file could not be read'
    : e.set ? 'The files are not one model' : foreign() ? `Not a valid ${FORMAT_NAMES[state.format]} file` : 'Not a valid Kiln value';
  $('error-message').textContent = e.code && e.message.startsWith(`${e.code}: `) ? e.message.slice(e.code.length + 2) : e.message;
  const off = e.offset;
  const size = length === undefined ? '' : `${fmtBytes(length)}.`;
  $('error-where').textContent = (off === undefined || length === undefined
    ? `${name}${size ? `: ${size}` : '.'}`
    : `${name}: the fault is at byte ${intFmt.format(off)} (${hex(off)}) of ${intFmt.format(length)}${off >= length ? ' \u2014 past the end of the file' : ''}.`)
    + (off === undefined || !hexView ? '' : ' The highlighted byte below is at that offset.');
  renderHex(hexView, off, length);
  document.body.dataset.state = 'error';
  document.title = `${e.code ?? 'Error'} \u2014 ${name} \u2014 Kiln inspector`;
}

function renderHex(view, off, length) {
  const pre = $('hex');
  pre.textContent = '';
  pre.hidden = !view;
  if (!view) return;
  const { start, bytes } = view;
  const end = start + bytes.length;
  const at = off === undefined ? start : Math.min(off, Math.max(length - 1, 0));
  for (let row = start; row < end; row += 16) {
    const line = el('div', { class: off !== undefined && at >= row && at < row + 16 ? 'row-hit' : '' }, el('span', { class: 'off' }, row.toString(16).padStart(8, '0')), '  ');
    let ascii = '';
    for (let i = row; i < row + 16; i++) {
      if (i < end) {
        const b = bytes[i - start];
        line.append(el('span', { class: i === off ? 'hit' : '' }, b.toString(16).padStart(2, '0')), i % 8 === 7 ? '  ' : ' ');
        ascii += b >= 32 && b < 127 ? String.fromCharCode(b) : '.';
      } else line.append('   ');
    }
    line.append(' ', el('span', { class: 'ascii' }, ascii));
    pre.append(line);
  }
  if (off !== undefined && off >= length) pre.append(el('div', { class: 'off' }, `(end of file at ${hex(length)})`));
}

// ---------------------------------------------------------------- the file

function showFile() {
  const f = state.file;
  const h = f.header;
  state.tensors = f.tensors;
  state.dirs = f.directories;
  state.scaleOf = new Map();
  for (const t of state.tensors) {
    for (const [j, role] of [[t.scale, 'scale'], [t.outer, 'outer scale']]) {
      if (j !== null) state.scaleOf.set(j, [...(state.scaleOf.get(j) ?? []), [t.index, role]]);
    }
  }
  $('error').hidden = true;
  $('file').hidden = false;
  $('file-name').textContent = state.name;
  const payload = state.tensors.reduce((a, t) => a + t.byteLength, 0);
  const model = h.format !== 'kiln';
  const facts = [
    ['Format', FORMAT_NAMES[h.format] ?? h.format],
    ['Size', fmtBytes(h.byteLength)],
    ['Bytes', intFmt.format(h.byteLength)],
    ...(model ? [['Head', `${intFmt.format(state.dirs[0]?.payloadOffset ?? 0)} bytes`]] : [
      ['Type', h.typeText],
      ['Framed', h.framed ? 'yes' : 'no'],
      ['Hash', el('span', { class: 'hash' }, hex(h.schemaHash, 16))]]),
    ['Tensors', intFmt.format(h.tensorCount)],
    ...(model ? [] : [['Directories', intFmt.format(h.directoryCount)]]),
    ['Payloads', fmtBytes(payload)],
    ['Checked', `${state.checkMs.toFixed(1)} ms`],
    ['Read', el('span', {}, el('span', { id: 'read-bytes' }, readText()), el('small', {}, model
      ? 'by ranges: the open reads the head alone; a tensor’s bytes are read when it is shown.'
      : 'by ranges: the check reads the heads; a tensor’s bytes are read when it is shown.'))],
    ['Memory', el('span', { id: 'wasm-memory' }, fmtBytes(state.io.wasmMemory),
      el('small', {}, 'wasm memory, bounded whatever the file’s size.'))],
  ];
  if (f.files?.length > 1) {
    facts.splice(0, 0, ['Files', el('span', { id: 'set-files' }, `${f.files.length}`, ...f.files.map((x) => el('small', { title: x.name }, el('b', {}, x.label), ` ${intFmt.format(x.tensorCount)} tensors, ${fmtBytes(x.byteLength)}`)))]);
    if (f.duplicates?.length) facts.push(['Duplicates', el('span', { class: 'warn' }, `${f.duplicates.length}`, ...f.duplicates.slice(0, 5).map((d) => el('small', {}, `${d.key} in ${d.files.join(' and ')}`)))]);
  }
  $('header-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  $('directories').replaceChildren(...state.dirs.map((d, i) => el('li', {},
    el('button', { title: 'Show only these tensors', onclick: () => { $('filter').value = d.path ? `path:${d.path}` : ''; refreshRows(); } }, d.path || '(root)'),
    el('span', { class: 'muted' }, `${d.tensorCount} @ ${hex(d.offset)}${d.fileName && isSet() ? ` in ${d.fileLabel}` : ''}`))));
  const meta = f.metadata ?? [];
  $('meta-box').hidden = !model;
  $('meta').replaceChildren(...meta.flatMap((p) => [
    el('dt', { title: p.key }, p.key),
    el('dd', { title: p.value }, el('small', {}, p.type), p.value)]));
  if (model && !meta.length) $('meta').replaceChildren(el('dd', { class: 'muted' }, 'none'));
  showSetPlace(f);
  const value = f.value;
  $('tree-box').hidden = value === null;
  if (value !== null) $('tree').replaceChildren(treeNode(null, value, 0));
  $('filter').value = '';
  state.selected = -1;
  renderHead();
  refreshRows();
  document.body.dataset.state = 'ready';
  document.title = `${state.name} \u2014 Kiln inspector`;
  // The open's time as the user sees it: from the file picked or dropped
  // to the frame that shows the table (the next frame's callback).
  const picked = state.pickedAt;
  state.pickedAt = undefined;
  state.drawnMs = undefined;
  if (picked !== undefined) requestAnimationFrame(() => { state.drawnMs = performance.now() - picked; });
  $('directories').parentElement.querySelector('h3').hidden = model;
  $('directories').hidden = model;
  // A remote file's tensor is read only when picked: every byte shown is
  // a Range request.
  if (!state.tensors.length) $('detail').replaceChildren(el('p', { class: 'muted' }, 'This file has no tensors.'));
  else if (state.source?.url) {
    $('detail').replaceChildren(el('p', { class: 'muted' }, `Read by HTTP Range requests: ${fmtBytes(state.openIo.bytesRead)} so far. Select a tensor to read its bytes.`));
    $('detail').dataset.stats = 'none'; $('detail').dataset.values = 'done';
  } else {
    // The first tensor's facts and values after the table's frame: the
    // table is not held back by the detail panel (a layout of its own).
    // Until then the panel is empty and pending, never the last file's.
    const d = $('detail');
    d.replaceChildren();
    d.dataset.stats = 'pending'; d.dataset.values = 'pending';
    const job = state.job, first = state.rows[0]?.index ?? 0;
    requestAnimationFrame(() => setTimeout(() => { if (job === state.job && state.selected < 0) select(first); }, 0));
  }
}

/**
 * A file of a set opened alone: the module says where it belongs (a GGUF
 * file from its split keys, a safetensors shard from its name), and the
 * page says that the table is part of a model.
 */
function showSetPlace(f) {
  const box = $('set-place');
  const model = f.header.format === 'gguf' || f.header.format === 'safetensors';
  const place = model && !isSet() ? setPlace(state.name.split('/').pop(), f.header.format, f.metadata ?? []) : null;
  state.setPlace = place;
  box.hidden = !place;
  if (!place) return;
  const gguf = f.header.format === 'gguf';
  const names = place.files.length ? place.files : null;
  const n = place.count;
  box.replaceChildren(
    el('b', {}, `File ${place.no} of ${n} of a ${gguf ? 'GGUF split set' : 'safetensors shard set'}`),
    gguf ? ` (its split.no and split.count say so)` : ' (by its name)',
    place.tensorsCount !== null ? `: the table shows its ${intFmt.format(f.header.tensorCount)} tensors of the set’s ${intFmt.format(place.tensorsCount)}.` : ': the table shows this file’s tensors only.',
    ` Open all ${n} ${gguf ? 'files' : 'shards with their index'} to see the whole model`,
    ...(names ? [': ', ...names.flatMap((x, i) => [i ? ', ' : '', el('code', {}, x)]), '.'] : ['.']));
}

// ---------------------------------------------------------------- message tree

function treeNode(key, v, depth) {
  const label = key === null ? [] : [el('span', { class: 'k' }, key), ': '];
  if (v === null) return el('div', { class: 'leaf' }, ...label, el('span', { class: 'muted' }, 'null'));
  if (typeof v === 'bigint') return el('div', { class: 'leaf' }, ...label, el('span', { class: 'n' }, `${v}n`));
  if (typeof v === 'number' || typeof v === 'boolean') return el('div', { class: 'leaf' }, ...label, el('span', { class: 'n' }, fmtNum(v)));
  if (typeof v === 'string') return el('div', { class: 'leaf', title: v }, ...label, el('span', { class: 's' }, JSON.stringify(v)));
  if (v instanceof Uint8Array) {
    const head = Array.from(v.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join(' ');
    return el('div', { class: 'leaf' }, ...label, el('span', { class: 'n' }, `bytes[${v.length}] ${head}${v.length > 16 ? ' …' : ''}`));
  }
  if (v.$tensors !== undefined) {
    return el('div', { class: 'leaf' }, ...label, el('button', {
      class: 'link', title: 'Show these tensors in the table',
      onclick: () => { $('filter').value = `path:${v.path}`; refreshRows(); if (state.rows.length) select(state.rows[0].index); },
    }, `tensors (${v.tensorCount})`));
  }
  if (v.$repeat !== undefined) return el('div', { class: 'leaf' }, ...label, `${v.$repeat} \u00d7 `, treeNode(null, v.element, depth + 1));
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
  const shown = entries.slice(0, 200);
  const d = el('details', { open: depth < 3 },
    el('summary', {}, ...label, el('span', { class: 'muted' }, Array.isArray(v) ? `[${v.length}]` : `{${entries.length}}`)),
    ...shown.map(([k, x]) => treeNode(k, x, depth + 1)));
  if (entries.length > shown.length) d.append(el('div', { class: 'muted' }, `… ${entries.length - shown.length} more`));
  return d;
}

// ---------------------------------------------------------------- the table

function displayName(t) {
  // A set's files are told apart by the File column, not by a path.
  const path = t.path || (state.dirs.length > 1 && !isSet()) ? `${t.path} \u203a ` : '';
  return path + (t.name ?? `#${t.indexInDirectory}`);
}

function sortKey(t, key) {
  switch (key) {
    case 'name': return displayName(t);
    case 'shape': return t.shape.length * 1e12 + t.shape.reduce((a, d) => a * 1.0001 + d, 0);
    case 'quant': return t.quantScheme;
    case 'layout': return t.layout ?? '';
    case 'fileName': return `${String(t.file).padStart(8, '0')}`;
    default: return t[key];
  }
}

function renderHead() {
  $('table-head').className = `table-head cols${setClass()}`;
  $('table-head').replaceChildren(...shownColumns().map((c) => el('div', {
    class: `${c.num ? 'num' : ''} ${state.sort.key === c.key ? 'sorted' : ''}`, role: 'columnheader', 'data-key': c.key,
    onclick: () => { state.sort = { key: c.key, dir: state.sort.key === c.key ? -state.sort.dir : 1 }; renderHead(); refreshRows(); },
  }, c.label, state.sort.key === c.key ? (state.sort.dir > 0 ? ' \u25b2' : ' \u25bc') : '')));
}

function refreshRows() {
  const q = $('filter').value.trim().toLowerCase();
  let rows = state.tensors;
  if (q) {
    const [path, rest] = q.startsWith('path:') ? [q.slice(5), ''] : [null, q];
    rows = rows.filter((t) => (path === null || t.path.toLowerCase() === path) &&
      (!rest || `${displayName(t)} ${t.dtype} ${t.layout ?? ''} ${t.quant} ${t.fileName ?? ''}`.toLowerCase().includes(rest)));
  }
  const { key, dir } = state.sort;
  if (key !== 'index') {
    rows = rows.map((t) => [sortKey(t, key), t]).sort((a, b) => (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1].index - b[1].index)).map((x) => x[1]);
  }
  state.rows = rows;
  $('count').textContent = rows.length === state.tensors.length
    ? `${intFmt.format(rows.length)} tensors` : `${intFmt.format(rows.length)} of ${intFmt.format(state.tensors.length)}`;
  $('table-spacer').style.height = `${rows.length * ROW}px`;
  renderRows();
}

function renderRows() {
  const scroll = $('table-scroll');
  const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - 5);
  const last = Math.min(state.rows.length, first + Math.ceil(scroll.clientHeight / ROW) + 10);
  const box = $('table-rows');
  box.style.transform = `translateY(${first * ROW}px)`;
  const out = [];
  for (let i = first; i < last; i++) {
    const t = state.rows[i];
    const quant = t.quantScheme === 0 ? '' : el('span', { class: 'tag q', title: `scales: ${t.scaleName ?? t.scale}${t.outer !== null ? `, outer: ${t.outerName ?? t.outer}` : ''}` },
      t.quantScheme === 1 ? `scales /${t.groupSize}` : `+outer /${t.groupSize}`);
    out.push(el('div', { class: `row cols${setClass()}${t.index === state.selected ? ' selected' : ''}`, role: 'row', 'data-index': t.index, onclick: () => select(t.index) },
      el('div', { title: displayName(t) }, displayName(t)),
      el('div', {}, el('span', { class: t.layout ? 'tag opaque' : 'tag' }, t.layout ? 'opaque' : t.dtype)),
      el('div', {}, shapeText(t.shape)),
      el('div', { class: 'num' }, intFmt.format(t.elements)),
      el('div', { class: 'num' }, fmtBytes(t.byteLength)),
      el('div', { class: 'num' }, hex(t.byteOffset)),
      setPlain() ? null : el('div', {}, quant),
      setPlain() ? null : el('div', {}, t.layout ?? ''),
      isSet() ? el('div', { class: 'file', title: t.fileName }, t.fileLabel) : null));
  }
  box.replaceChildren(...out);
}

// ---------------------------------------------------------------- a tensor

function select(index) {
  state.selected = index;
  renderRows();
  const pos = state.rows.findIndex((t) => t.index === index);
  const scroll = $('table-scroll');
  if (pos >= 0 && (pos * ROW < scroll.scrollTop || (pos + 1) * ROW > scroll.scrollTop + scroll.clientHeight)) {
    scroll.scrollTop = Math.max(0, pos * ROW - scroll.clientHeight / 3);
  }
  showTensor(state.tensors[index]);
}

function link(j, text) {
  return el('button', { class: 'link', onclick: () => { $('filter').value = ''; refreshRows(); select(j); } }, text);
}

function readText() {
  const io = state.io;
  const size = state.file?.header.byteLength ?? 0;
  return `${fmtBytes(io.bytesRead)}, ${intFmt.format(io.requests)} reads`;
}

function updateIo() {
  if ($('read-bytes')) $('read-bytes').textContent = readText();
  if ($('wasm-memory')?.firstChild) $('wasm-memory').firstChild.textContent = fmtBytes(state.io.wasmMemory);
}

function showTensor(t) {
  if (state.statsJob) worker.postMessage({ op: 'cancel', job: state.statsJob });
  const job = ++state.job;
  const d = $('detail');
  d.dataset.stats = 'pending';
  d.dataset.values = 'pending';
  const kv = [
    ...(isSet() ? [['File', t.fileName]] : []),
    ['Path', t.path || '(root)'],
    ['Index', `${t.index}${state.dirs.length > 1 ? ` (${t.indexInDirectory} in its directory)` : ''}`],
    ['Dtype', t.layout ? `${t.layout} blocks (opaque, code ${t.dtypeCode})` : `${t.dtype} (code ${t.dtypeCode})`],
    ['Shape', shapeText(t.shape)],
    ['Elements', intFmt.format(t.elements)],
    ['Bytes', t.byteLength < 1024 ? intFmt.format(t.byteLength) : `${intFmt.format(t.byteLength)} (${fmtBytes(t.byteLength)})`],
    ['Offset', `${intFmt.format(t.byteOffset)} (${hex(t.byteOffset)})`],
  ];
  if (t.layout) kv.push(['Layout', `${t.layout}, block ${t.blockSize} B, ${intFmt.format(t.byteLength / t.blockSize)} blocks`]);
  if (t.quantScheme) {
    kv.push(['Quantization', `${t.quant}: groups of ${t.groupSize} along axis ${t.axis}`]);
    kv.push(['Scale tensor', link(t.scale, t.scaleName ?? `#${t.scale}`)]);
    if (t.outer !== null) kv.push(['Outer scale', link(t.outer, t.outerName ?? `#${t.outer}`)]);
  }
  for (const [j, role] of state.scaleOf.get(t.index) ?? []) kv.push([`${role[0].toUpperCase()}${role.slice(1)} of`, link(j, state.tensors[j].name ?? `#${j}`)]);
  kv.push(['In place', t.aligned
    ? el('span', {}, el('span', { class: 'badge zero' }, 'aligned'), ' a memory map or a buffer of the file views it as a typed array, no copy')
    : el('span', {}, el('span', { class: 'badge copy' }, 'misaligned'), ` offset not a multiple of ${t.elementAlign}: a view copies it`)]);

  const values = el('div', { class: 'values' }, el('span', { class: 'muted' }, 'Reading\u2026'));
  d.replaceChildren(
    el('h2', {}, t.name ?? `#${t.indexInDirectory}`),
    el('dl', { class: 'kv' }, kv.flatMap(([a, b]) => [el('dt', {}, a), el('dd', {}, b)])),
  );
  const closed = !t.layout;
  d.append(el('h3', {}, closed ? 'First values' : 'First bytes'), values);
  if (t.quantScheme) d.append(el('p', { class: 'note' }, 'Stored bits shown as values; Kiln never applies the scale.'));
  call({ op: 'first', index: t.local ?? t.index, file: t.file, count: 16 }).then((r) => {
    if (job !== state.job && state.selected !== t.index) return;
    showFirst(values, t, r);
    d.dataset.values = 'done';
    updateIo();
  });
  if (!closed) { d.dataset.stats = 'none'; return; }
  if (t.elements === 0) { d.append(el('p', { class: 'note' }, 'No elements.')); d.dataset.stats = 'none'; return; }
  const bar = el('progress', { max: 1, value: 0 });
  const statsBox = el('div', { class: 'stats' });
  const hist = el('canvas', { width: 400, height: 90, 'aria-label': 'Histogram' });
  const axis = el('div', { class: 'axis' });
  const label = el('div', { class: 'progress-label' }, `Reading ${fmtBytes(t.byteLength)} for ${intFmt.format(t.elements)} elements\u2026`);
  const cancel = el('button', { class: 'button small', id: 'cancel-stats', onclick: () => { worker.postMessage({ op: 'cancel', job }); } }, 'Cancel');
  d.append(el('h3', {}, 'Statistics'), el('div', { class: 'progress-row' }, bar, cancel), label, statsBox, el('h3', {}, 'Histogram'), hist, axis);
  let heat = null;
  if (t.shape.length === 2 && t.elements > 1) {
    heat = el('canvas', { class: 'heat', 'aria-label': 'Heatmap' });
    d.append(el('h3', {}, `Heatmap (${t.shape[0]} \u00d7 ${t.shape[1]}${t.shape[0] > 256 || t.shape[1] > 256 ? ', sampled' : ''})`), heat, el('div', { class: 'axis' }, el('span', { id: 'heat-lo' }), el('span', { id: 'heat-hi' })));
  }
  state.statsJob = job;
  progress.set(job, (p) => {
    bar.value = p.progress;
    label.textContent = `${p.label.replace(/\d+/g, (x) => intFmt.format(Number(x)))} (${Math.round(100 * p.progress)}%)`;
  });
  call({ op: 'stats', job, index: t.local ?? t.index, file: t.file }).then((r) => {
    progress.delete(job);
    updateIo();
    if (r.cancelled) {
      bar.hidden = true; cancel.hidden = true;
      label.textContent = 'Cancelled.';
      if (job === state.job) d.dataset.stats = 'cancelled';
      return;
    }
    if (job !== state.job) return;
    if (r.error) { label.textContent = `${r.error.code}: ${r.error.message}`; d.dataset.stats = 'done'; return; }
    bar.hidden = true; cancel.hidden = true; label.hidden = true;
    const { min, max, mean, nan, inf, finite } = r;
    const stat = (name, value) => el('div', { class: 'stat' }, el('small', {}, name), el('b', { title: String(value) }, value));
    statsBox.replaceChildren(
      stat('min', finite ? fmtNum(min) : '\u2014'), stat('max', finite ? fmtNum(max) : '\u2014'), stat('mean', finite ? fmtNum(mean) : '\u2014'),
      stat('NaN', intFmt.format(nan)), stat('Inf', intFmt.format(inf)), stat('time', `${Math.round(r.ms)} ms`));
    drawHistogram(hist, r.bins);
    axis.replaceChildren(el('span', {}, finite ? fmtNum(min) : ''), el('span', {}, `${intFmt.format(finite)} finite values, ${fmtBytes(r.bytes)} read`), el('span', {}, finite ? fmtNum(max) : ''));
    if (heat && r.heat) drawHeatmap(heat, r.heat);
    state.lastStats = { ms: r.ms, bytes: r.bytes };
    d.dataset.stats = 'done';
  });
}

function showFirst(box, t, r) {
  box.replaceChildren();
  if (r.error) { box.append(el('span', { class: 'muted' }, `${r.error.code}: ${r.error.message}`)); return; }
  if (r.bytes) {
    box.style.gridTemplateColumns = 'repeat(8, 1fr)';
    box.append(...Array.from(r.bytes, (x) => el('span', {}, x.toString(16).padStart(2, '0'))));
    return;
  }
  box.append(...r.values.map((v, i) => el('span', { title: `[${i}]` }, fmtNum(v))));
  if (t.elements > r.values.length) box.append(el('span', { class: 'muted more' }, `\u2026 ${intFmt.format(t.elements - r.values.length)} more`));
}

function drawHistogram(canvas, bins) {
  const ctx = canvas.getContext('2d');
  const { width: w, height: h } = canvas;
  ctx.clearRect(0, 0, w, h);
  const top = Math.max(...bins, 1);
  const bw = w / bins.length;
  ctx.fillStyle = '#ea580c';
  bins.forEach((c, i) => {
    if (!c) return;
    const bh = Math.max(1, Math.sqrt(c / top) * (h - 6));
    ctx.fillRect(i * bw + 0.5, h - bh, Math.max(1, bw - 1), bh);
  });
  ctx.fillStyle = '#9ca3af';
  ctx.fillRect(0, h - 1, w, 1);
}

function drawHeatmap(canvas, { W, H, cells }) {
  canvas.width = W; canvas.height = H;
  canvas.style.aspectRatio = `${W} / ${H}`;
  // As wide as the panel, or narrower for a tall matrix (at most 1.2 times as tall as wide).
  canvas.style.width = `${Math.min(100, (120 * W) / H)}%`;
  let lo = Infinity, hi = -Infinity;
  for (const v of cells) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  const diverging = lo < 0 && hi > 0;
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const img = new ImageData(W, H);
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    let rgb;
    if (!Number.isFinite(v)) rgb = [160, 160, 170];
    else if (diverging) {
      const s = Math.min(1, Math.abs(v) / m);
      rgb = v < 0 ? [255 - 200 * s, 255 - 140 * s, 255 - 40 * s] : [255 - 40 * s, 255 - 170 * s, 255 - 215 * s];
    } else {
      const s = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      rgb = [255 - 60 * s, 250 - 170 * s, 240 - 225 * s];
    }
    img.data.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
  $('heat-lo').textContent = diverging ? `blue \u2264 ${fmtNum(-m)}` : `light = ${fmtNum(lo)}`;
  $('heat-hi').textContent = diverging ? `red \u2265 ${fmtNum(m)}` : `dark = ${fmtNum(hi)}`;
}

// ---------------------------------------------------------------- wiring

await init();
state.samples = await (await fetch('samples/samples.json')).json();
$('sample-select').append(...state.samples.map((s) => el('option', { value: s.file }, s.title)));
const types = el('datalist', { id: 'types' }, [...new Set(state.samples.filter((s) => s.type !== 'tensors').map((s) => s.type))].map((t) => el('option', { value: t })));
document.body.append(types);
$('type-text').setAttribute('list', 'types');

$('file-input').addEventListener('change', (e) => { const list = [...e.target.files]; state.pickedAt = performance.now(); if (list.length) openFiles(list); e.target.value = ''; });
$('sample-select').addEventListener('change', (e) => { if (e.target.value) openSample(e.target.value); e.target.value = ''; });
$('mode').addEventListener('change', () => { setMode($('mode').value); if (state.source && $('mode').value === 'directory') reopen(); });
$('open-form').addEventListener('submit', (e) => { e.preventDefault(); reopen(); });
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = $('url-input').value.trim();
  if (url) openUrl(url, url.split('/').pop() || url);
});
$('filter').addEventListener('input', () => refreshRows());
$('table-scroll').addEventListener('scroll', () => requestAnimationFrame(renderRows));
window.addEventListener('resize', () => renderRows());
window.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
window.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dragging'); });
window.addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const list = [...(e.dataTransfer?.files ?? [])];
  state.pickedAt = performance.now();
  if (list.length) openFiles(list);
});
document.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'INPUT' || state.selected < 0) return;
  const pos = state.rows.findIndex((t) => t.index === state.selected);
  if (e.key === 'ArrowDown' && pos < state.rows.length - 1) { e.preventDefault(); select(state.rows[pos + 1].index); }
  if (e.key === 'ArrowUp' && pos > 0) { e.preventDefault(); select(state.rows[pos - 1].index); }
});

setupCompare({ state, call, worker, progress, typeOf, setBusy, el, fmtNum, fmtBytes, intFmt, shapeText, showError, workerReady });

const params = new URLSearchParams(location.search);
if (params.get('sample')) openSample(params.get('sample'));
else if (params.get('url')) {
  $('url-input').value = params.get('url');
  openUrl(params.get('url'), params.get('name') ?? params.get('url'), params.get('mode') ?? undefined, params.get('type') ?? undefined);
} else document.body.dataset.state = 'empty';

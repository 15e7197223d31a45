// The Kiln inspector: plain ES modules over kiln-wasm (www/pkg/, built by
// `bash scripts/www.sh --build-only`). The file's bytes stay in the
// ArrayBuffer the browser read; tables, values and statistics come from
// typed arrays over it (or, for f16, bf16, f8 and 4-bit dtypes, from the
// module's display conversions, chunk by chunk).
import init, { KilnFile, peekFrame, schemaHash } from './pkg/kiln_wasm.js';

const $ = (id) => document.getElementById(id);
const ROW = 26;
const CHUNK = 1 << 20; // elements per statistics step
const state = {
  kiln: null, bytes: null, name: '', tensors: [], dirs: [], rows: [], sort: { key: 'index', dir: 1 },
  selected: -1, job: 0, samples: [], scaleOf: new Map(),
};
window.kilnInspector = state; // for the end-to-end tests and the console

const columns = [
  { key: 'name', label: 'Name' }, { key: 'dtype', label: 'Dtype' }, { key: 'shape', label: 'Shape' },
  { key: 'elements', label: 'Elements', num: true }, { key: 'byteLength', label: 'Bytes', num: true },
  { key: 'byteOffset', label: 'Offset', num: true }, { key: 'quant', label: 'Quantization' }, { key: 'layout', label: 'Layout' },
];

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

// ---------------------------------------------------------------- opening

function setMode(mode, type) {
  const input = $('type-text');
  $('mode').value = mode;
  if (mode === 'directory' && !input.disabled) { input.dataset.last = input.value; input.value = ''; }
  if (mode !== 'directory' && input.disabled && !input.value) input.value = input.dataset.last ?? '';
  input.disabled = mode === 'directory';
  if (type !== undefined && mode !== 'directory') input.value = type;
}

async function openFile(file) {
  setBusy(`Reading ${file.name}…`);
  const bytes = new Uint8Array(await file.arrayBuffer()); // the one read
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic === 'KLNT') setMode('directory');
  else if (peekFrame(bytes)) {
    // The frame carries the schema hash: a bundled type that matches it
    // is taken; otherwise the type text in the box.
    setMode('framed');
    const match = state.samples.find((s) => s.framed && hashMatches(bytes, s.type));
    if (match) $('type-text').value = match.type;
  } else if ($('mode').value === 'directory') setMode('plain');
  openBytes(bytes, file.name);
}

// The module reads the frame (peekFrame) and hashes type text
// (schemaHash): the page never parses a header itself.
function hashMatches(bytes, type) {
  const frame = peekFrame(bytes);
  if (!frame) return false;
  try { return frame.hash === schemaHash(type); } catch { return false; }
}

async function openSample(name) {
  const meta = state.samples.find((s) => s.file === name);
  if (!meta) return;
  setBusy(`Loading ${name}…`);
  const buf = await (await fetch(`samples/${name}`)).arrayBuffer();
  setMode(meta.type === 'tensors' && !meta.framed ? 'directory' : meta.framed ? 'framed' : 'plain', meta.type);
  openBytes(new Uint8Array(buf), name);
}

function setBusy(text) { document.body.dataset.state = 'loading'; document.title = text; }

function openBytes(bytes, name) {
  state.job++;
  if (state.kiln) { state.kiln.free(); state.kiln = null; }
  state.bytes = bytes; state.name = name;
  $('reopen').disabled = false;
  const mode = $('mode').value;
  if (mode === 'framed' && !$('type-text').value.trim()) {
    const match = state.samples.find((s) => s.framed && hashMatches(bytes, s.type));
    if (match) $('type-text').value = match.type;
  }
  const type = mode === 'directory' ? 'tensors' : $('type-text').value.trim();
  $('welcome').hidden = true;
  const t0 = performance.now();
  try {
    if (!type) throw Object.assign(new Error('Type the message\u2019s type text, or pick a bundled one.'), { code: 'BadTypeText' });
    state.kiln = KilnFile.open(bytes, type, mode === 'framed');
  } catch (e) {
    showError(e, bytes, name);
    return;
  }
  state.checkMs = performance.now() - t0;
  showFile();
}

// ---------------------------------------------------------------- errors

function showError(e, bytes, name) {
  $('file').hidden = true;
  $('error').hidden = false;
  $('error-code').textContent = e.code ?? 'Error';
  $('error-message').textContent = e.code && e.message.startsWith(`${e.code}: `) ? e.message.slice(e.code.length + 2) : e.message;
  const off = e.offset;
  $('error-where').textContent = (off === undefined
    ? `${name}: ${fmtBytes(bytes.length)}.`
    : `${name}: the fault is at byte ${intFmt.format(off)} (${hex(off)}) of ${intFmt.format(bytes.length)}${off >= bytes.length ? ' \u2014 past the end of the file' : ''}.`)
    + (off === undefined ? '' : ' The highlighted byte below is at that offset.');
  renderHex(bytes, off);
  document.body.dataset.state = 'error';
  document.title = `${e.code ?? 'Error'} \u2014 ${name} \u2014 Kiln inspector`;
}

function renderHex(bytes, off) {
  const pre = $('hex');
  pre.textContent = '';
  const at = off === undefined ? 0 : Math.min(off, Math.max(bytes.length - 1, 0));
  const start = Math.max(0, (at & ~15) - 128);
  const end = Math.min(bytes.length, start + 320);
  for (let row = start; row < end; row += 16) {
    const line = el('div', { class: off !== undefined && at >= row && at < row + 16 ? 'row-hit' : '' }, el('span', { class: 'off' }, row.toString(16).padStart(8, '0')), '  ');
    let ascii = '';
    for (let i = row; i < row + 16; i++) {
      if (i < end) {
        const b = bytes[i];
        line.append(el('span', { class: i === off ? 'hit' : '' }, b.toString(16).padStart(2, '0')), i % 8 === 7 ? '  ' : ' ');
        ascii += b >= 32 && b < 127 ? String.fromCharCode(b) : '.';
      } else line.append('   ');
    }
    line.append(' ', el('span', { class: 'ascii' }, ascii));
    pre.append(line);
  }
  if (off !== undefined && off >= bytes.length) pre.append(el('div', { class: 'off' }, `(end of file at ${hex(bytes.length)})`));
}

// ---------------------------------------------------------------- the file

function showFile() {
  const k = state.kiln;
  const h = k.header;
  state.tensors = k.tensors();
  state.dirs = k.directories();
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
  const facts = [
    ['Size', fmtBytes(h.byteLength)],
    ['Bytes', intFmt.format(h.byteLength)],
    ['Type', h.typeText],
    ['Framed', h.framed ? 'yes' : 'no'],
    ['Hash', el('span', { class: 'hash' }, hex(h.schemaHash, 16))],
    ['Tensors', intFmt.format(h.tensorCount)],
    ['Directories', intFmt.format(h.directoryCount)],
    ['Payloads', fmtBytes(payload)],
    ['Checked', `${state.checkMs.toFixed(1)} ms`],
    ['Copied', el('span', {}, `${fmtBytes(h.copiedBytes)} (${(100 * h.copiedBytes / Math.max(h.byteLength, 1)).toFixed(1)}%)`,
      el('small', {}, h.copiedBytes > 0.5 * h.byteLength
        ? 'Small files, and payloads under 4 KiB, are copied whole for the check.'
        : 'Payloads stay in the file\u2019s buffer: only what the check reads was copied.'))],
  ];
  $('header-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  $('directories').replaceChildren(...state.dirs.map((d, i) => el('li', {},
    el('button', { title: 'Show only these tensors', onclick: () => { $('filter').value = d.path ? `path:${d.path}` : ''; refreshRows(); } }, d.path || '(root)'),
    el('span', { class: 'muted' }, `${d.tensorCount} @ ${hex(d.offset)}`))));
  const value = h.typeText === 'tensors' ? null : k.value();
  $('tree-box').hidden = value === null;
  if (value !== null) $('tree').replaceChildren(treeNode(null, value, 0));
  $('filter').value = '';
  state.selected = -1;
  renderHead();
  refreshRows();
  document.body.dataset.state = 'ready';
  document.title = `${state.name} \u2014 Kiln inspector`;
  if (state.tensors.length) select(state.rows[0]?.index ?? 0);
  else $('detail').replaceChildren(el('p', { class: 'muted' }, 'This file has no tensors.'));
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
  const path = state.dirs.length > 1 || t.path ? `${t.path} \u203a ` : '';
  return path + (t.name ?? `#${t.indexInDirectory}`);
}

function sortKey(t, key) {
  switch (key) {
    case 'name': return displayName(t);
    case 'shape': return t.shape.length * 1e12 + t.shape.reduce((a, d) => a * 1.0001 + d, 0);
    case 'quant': return t.quantScheme;
    case 'layout': return t.layout ?? '';
    default: return t[key];
  }
}

function renderHead() {
  $('table-head').className = 'table-head cols';
  $('table-head').replaceChildren(...columns.map((c) => el('div', {
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
      (!rest || `${displayName(t)} ${t.dtype} ${t.layout ?? ''} ${t.quant}`.toLowerCase().includes(rest)));
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
    out.push(el('div', { class: `row cols${t.index === state.selected ? ' selected' : ''}`, role: 'row', 'data-index': t.index, onclick: () => select(t.index) },
      el('div', { title: displayName(t) }, displayName(t)),
      el('div', {}, el('span', { class: t.layout ? 'tag opaque' : 'tag' }, t.layout ? 'opaque' : t.dtype)),
      el('div', {}, shapeText(t.shape)),
      el('div', { class: 'num' }, intFmt.format(t.elements)),
      el('div', { class: 'num' }, fmtBytes(t.byteLength)),
      el('div', { class: 'num' }, hex(t.byteOffset)),
      el('div', {}, quant),
      el('div', {}, t.layout ?? '')));
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

function showTensor(t) {
  const job = ++state.job;
  const k = state.kiln;
  const d = $('detail');
  d.dataset.stats = 'pending';
  const kv = [
    ['Path', t.path || '(root)'],
    ['Index', `${t.index}${state.dirs.length > 1 ? ` (${t.indexInDirectory} in its directory)` : ''}`],
    ['Dtype', t.layout ? `opaque, code ${t.dtypeCode}` : `${t.dtype} (code ${t.dtypeCode})`],
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

  let view = null, viewNote;
  try {
    view = k.view(t.index);
    viewNote = view.copied
      ? el('span', {}, el('span', { class: 'badge copy' }, 'copy'), ` ${view.arrayType}: ${view.reason}`)
      : el('span', {}, el('span', { class: 'badge zero' }, 'zero-copy'), ` ${view.arrayType} over the file's buffer`);
  } catch (e) { viewNote = `${e.code}: ${e.message}`; }
  kv.push(['View', viewNote]);

  d.replaceChildren(
    el('h2', {}, t.name ?? `#${t.indexInDirectory}`),
    el('dl', { class: 'kv' }, kv.flatMap(([a, b]) => [el('dt', {}, a), el('dd', {}, b)])),
  );
  const closed = !t.layout;
  d.append(el('h3', {}, closed ? 'First values' : 'First bytes'), firstValues(t, view));
  if (t.quantScheme) d.append(el('p', { class: 'note' }, 'Stored bits shown as values; Kiln never applies the scale.'));
  if (!closed) { d.dataset.stats = 'none'; return; }
  if (t.elements === 0) { d.append(el('p', { class: 'note' }, 'No elements.')); d.dataset.stats = 'none'; return; }
  const progress = el('progress', { max: 1, value: 0 });
  const statsBox = el('div', { class: 'stats' });
  const hist = el('canvas', { width: 400, height: 90, 'aria-label': 'Histogram' });
  const axis = el('div', { class: 'axis' });
  const label = el('div', { class: 'progress-label' }, `Computing over ${intFmt.format(t.elements)} elements\u2026`);
  d.append(el('h3', {}, 'Statistics'), progress, label, statsBox, el('h3', {}, 'Histogram'), hist, axis);
  let heat = null;
  if (t.shape.length === 2 && t.elements > 1) {
    heat = el('canvas', { class: 'heat', 'aria-label': 'Heatmap' });
    d.append(el('h3', {}, `Heatmap (${t.shape[0]} \u00d7 ${t.shape[1]}${t.shape[0] > 256 || t.shape[1] > 256 ? ', sampled' : ''})`), heat, el('div', { class: 'axis' }, el('span', { id: 'heat-lo' }), el('span', { id: 'heat-hi' })));
  }
  runStats(t, view, job, progress, label, statsBox, hist, axis, heat);
}

/** Elements first..first+count as numbers: the view itself for f32/f64 and
 * the integer types that fit a double, else the module's display widening. */
function chunkOf(t, view, first, count) {
  const direct = view && ['f32', 'f64', 'i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'bool'].includes(t.dtype);
  return direct ? view.array.subarray(first, first + count) : state.kiln.widen(t.index, first, count);
}

function firstValues(t, view) {
  const box = el('div', { class: 'values' });
  if (t.layout) {
    const b = state.bytes.subarray(t.byteOffset, t.byteOffset + Math.min(64, t.byteLength));
    box.style.gridTemplateColumns = 'repeat(8, 1fr)';
    box.append(...Array.from(b, (x) => el('span', {}, x.toString(16).padStart(2, '0'))));
    return box;
  }
  const n = Math.min(16, t.elements);
  const vals = view && (t.dtype === 'i64' || t.dtype === 'u64') ? Array.from(view.array.subarray(0, n)) : Array.from(chunkOf(t, view, 0, n));
  box.append(...vals.map((v, i) => el('span', { title: `[${i}]` }, fmtNum(v))));
  if (t.elements > n) box.append(el('span', { class: 'muted more' }, `\u2026 ${intFmt.format(t.elements - n)} more`));
  return box;
}

async function runStats(t, view, job, progress, label, statsBox, hist, axis, heat) {
  const n = t.elements;
  let min = Infinity, max = -Infinity, sum = 0, nan = 0, inf = 0, finite = 0;
  const steps = Math.ceil(n / CHUNK) * 2;
  let step = 0;
  const t0 = performance.now();
  for (let first = 0; first < n; first += CHUNK) {
    const a = chunkOf(t, view, first, Math.min(CHUNK, n - first));
    for (let i = 0; i < a.length; i++) {
      const x = a[i];
      if (x !== x) nan++;
      else if (x === Infinity || x === -Infinity) inf++;
      else { finite++; sum += x; if (x < min) min = x; if (x > max) max = x; }
    }
    progress.value = ++step / steps;
    label.textContent = `Min, max, mean: ${intFmt.format(Math.min(n, first + CHUNK))} of ${intFmt.format(n)} elements (${Math.round(100 * progress.value)}%)`;
    await tick();
    if (job !== state.job) return;
  }
  const bins = new Float64Array(64);
  const span = max - min;
  if (finite > 0) {
    for (let first = 0; first < n; first += CHUNK) {
      const a = chunkOf(t, view, first, Math.min(CHUNK, n - first));
      for (let i = 0; i < a.length; i++) {
        const x = a[i];
        if (x === x && x !== Infinity && x !== -Infinity) bins[span > 0 ? Math.min(63, Math.floor(((x - min) / span) * 64)) : 0]++;
      }
      progress.value = ++step / steps;
      label.textContent = `Histogram: ${intFmt.format(Math.min(n, first + CHUNK))} of ${intFmt.format(n)} elements (${Math.round(100 * progress.value)}%)`;
      await tick();
      if (job !== state.job) return;
    }
  }
  progress.value = 1;
  progress.hidden = true;
  label.hidden = true;
  const stat = (label, value) => el('div', { class: 'stat' }, el('small', {}, label), el('b', { title: String(value) }, value));
  statsBox.replaceChildren(
    stat('min', finite ? fmtNum(min) : '\u2014'), stat('max', finite ? fmtNum(max) : '\u2014'), stat('mean', finite ? fmtNum(sum / finite) : '\u2014'),
    stat('NaN', intFmt.format(nan)), stat('Inf', intFmt.format(inf)), stat('time', `${Math.round(performance.now() - t0)} ms`));
  drawHistogram(hist, bins);
  axis.replaceChildren(el('span', {}, finite ? fmtNum(min) : ''), el('span', {}, `${intFmt.format(finite)} finite values`), el('span', {}, finite ? fmtNum(max) : ''));
  if (heat) await drawHeatmap(t, view, heat, job);
  if (job === state.job) $('detail').dataset.stats = 'done';
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

async function drawHeatmap(t, view, canvas, job) {
  const [rows, cols] = t.shape;
  const H = Math.min(rows, 256), W = Math.min(cols, 256);
  canvas.width = W; canvas.height = H;
  canvas.style.aspectRatio = `${W} / ${H}`;
  // As wide as the panel, or narrower for a tall matrix (at most 1.2 times as tall as wide).
  canvas.style.width = `${Math.min(100, (120 * W) / H)}%`;
  const cells = new Float64Array(W * H);
  for (let y = 0; y < H; y++) {
    const r = Math.floor((y * rows) / H);
    const row = chunkOf(t, view, r * cols, cols);
    for (let x = 0; x < W; x++) cells[y * W + x] = Number(row[Math.floor((x * cols) / W)]);
    if (y % 32 === 31) { await tick(); if (job !== state.job) return; }
  }
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

$('file-input').addEventListener('change', (e) => { const f = e.target.files[0]; if (f) openFile(f); e.target.value = ''; });
$('sample-select').addEventListener('change', (e) => { if (e.target.value) openSample(e.target.value); e.target.value = ''; });
$('mode').addEventListener('change', () => { setMode($('mode').value); if (state.bytes && $('mode').value === 'directory') openBytes(state.bytes, state.name); });
$('open-form').addEventListener('submit', (e) => { e.preventDefault(); if (state.bytes) openBytes(state.bytes, state.name); });
$('filter').addEventListener('input', () => refreshRows());
$('table-scroll').addEventListener('scroll', () => requestAnimationFrame(renderRows));
window.addEventListener('resize', () => renderRows());
window.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
window.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dragging'); });
window.addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const f = e.dataTransfer?.files?.[0];
  if (f) openFile(f);
});
document.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'INPUT' || state.selected < 0) return;
  const pos = state.rows.findIndex((t) => t.index === state.selected);
  if (e.key === 'ArrowDown' && pos < state.rows.length - 1) { e.preventDefault(); select(state.rows[pos + 1].index); }
  if (e.key === 'ArrowUp' && pos > 0) { e.preventDefault(); select(state.rows[pos - 1].index); }
});

const params = new URLSearchParams(location.search);
if (params.get('sample')) openSample(params.get('sample'));
else if (params.get('url')) {
  const mode = params.get('mode') ?? 'directory';
  setMode(mode, params.get('type') ?? '');
  setBusy('Loading…');
  fetch(params.get('url')).then((r) => r.arrayBuffer()).then((b) => openBytes(new Uint8Array(b), params.get('name') ?? params.get('url')));
} else document.body.dataset.state = 'empty';

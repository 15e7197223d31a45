// The Kiln inspector's page: plain ES modules, no framework, and no read
// of a file: the worker (worker.js, through rpc.js) opens every file by
// ranges with the inspector module (www/inspect/, built by
// `bash scripts/www.sh --build-only`) and says what it is. This module
// wires the page: opening (a file, several, a sample, a URL), the file's
// facts, and the parts each in its own module: format.js (the detected
// format and the mode selector), table.js, tensor.js (the tensor panel
// with charts.js), metadata.js, errors.js and compare.js.
import { $, el, int, fmtBytes, breakable } from './ui.js';
import { call, cancel, restart, job as newJob, io } from './rpc.js';
import { setupModes, showDetected, resetModes, override, setOverride, formatTitle } from './format.js';
import { showTable, refreshRows, renderRows, relayout, select, step, filterPath, firstRow, selected } from './table.js';
import { setModel, showTensor, showNothing, stop as stopStats } from './tensor.js';
import { showMetadata } from './metadata.js';
import { showError } from './errors.js';
import { fileLabels } from './set.js';
import { setupCompare } from './compare.js';

const state = {
  file: null, source: null, name: '', tensors: [], dirs: [], metadata: [], samples: [], openJob: 0, io,
  openIo: null, openMs: 0, checkMs: 0, drawnMs: undefined, pickedAt: undefined, setPlace: null, comparison: null, format: null,
};
window.kilnInspector = state; // for the end-to-end tests and the console
/** The worker's wasm memory past which the next file opens in a new worker. */
const WORKER_MEMORY = 64 << 20;

// ---------------------------------------------------------------- opening

/** The type texts the page knows (the bundled samples'): a frame of one of their hashes opens with it. */
const knownTypes = () => [...new Set(state.samples.map((s) => s.type).filter((t) => t && t !== 'tensors'))];

function setBusy(text, job) {
  document.body.dataset.state = 'loading';
  document.title = text;
  $('busy-text').textContent = text;
  $('busy').hidden = false;
  $('busy-cancel').onclick = () => cancel(job);
}

/**
 * Opens `files` ([{ blob, name }] or [{ url, name }]) as the page's model,
 * read as `reading` says (`{ type, framed }`, each undefined to let the
 * bytes decide). `source` is what "Check again" opens again.
 */
async function openModel(files, name, source, reading = {}) {
  stopStats();
  cancel(state.openJob);
  // Wasm memory never shrinks: after a file that needed much of it, the
  // next opens in a new worker.
  if (io.wasmMemory > WORKER_MEMORY) restart();
  const job = newJob();
  state.openJob = job;
  state.source = source;
  state.name = name;
  state.comparison = null;
  $('compare').hidden = true;
  $('reopen').disabled = false;
  $('welcome').hidden = true;
  setBusy(`Reading ${name}\u2026`, job);
  const t0 = performance.now();
  const r = await call({ op: 'open', job, side: 'a', files, ...reading, types: knownTypes() });
  if (state.openJob !== job) return;
  state.openJob = 0;
  $('busy').hidden = true;
  state.openMs = performance.now() - t0;
  if (r.cancelled) {
    state.file = null;
    showError({ code: 'Aborted', message: 'The open was cancelled: no more of the file is read.' }, null, undefined, name);
    return;
  }
  if (r.error) { state.file = null; showError(r.error, r.hex, r.length, r.name ?? name); return; }
  showModel(r);
}

/** One file or several (a set), from the file input or a drop: read as the bytes say. */
function openFiles(list) {
  $('url-input').value = ''; // the field names what is open: a file from disk has no URL
  resetModes();
  const name = list.length === 1 ? list[0].name : `${list.length} files`;
  return openModel(list.map((f) => ({ blob: f, name: f.name })), name, { files: list });
}

async function openSample(name) {
  if (!state.samples.some((s) => s.file === name)) return;
  $('url-input').value = '';
  resetModes();
  document.body.dataset.state = 'loading';
  const blob = await (await fetch(`samples/${name}`)).blob();
  const file = new File([blob], name.split('/').pop());
  return openModel([{ blob: file, name: file.name }], name, { files: [file] });
}

/** A remote file, by HTTP Range requests: only what is shown is transferred. */
function openUrl(url, name = url.split('/').pop() || url) {
  const href = new URL(url, location.href).href;
  return openModel([{ url: href, name }], name, { url: href, name }, override());
}

/** Opens what is open again, read as the selector and the type field say. */
function reopen() {
  const src = state.source;
  if (!src) return;
  const reading = override();
  if (src.url) openModel([{ url: src.url, name: src.name }], state.name, src, reading);
  else openModel(src.files.map((f) => ({ blob: f, name: f.name })), state.name, src, reading);
}

// ---------------------------------------------------------------- the model

const updateIo = () => {
  if ($('read-bytes')) $('read-bytes').textContent = `${fmtBytes(io.bytesRead)}, ${int(io.requests)} read${io.requests === 1 ? '' : 's'}`;
  if ($('wasm-memory')) $('wasm-memory').textContent = fmtBytes(io.wasmMemory);
};

function factsOf(r) {
  const h = r.header;
  const k = h.kiln;
  const payload = r.tensors.reduce((a, t) => a + Number(t.bytes), 0);
  const message = k && !k.converted_from && !(k.type === 'tensors' && !k.framed);
  const facts = [];
  if (h.files.length > 1) {
    const labels = fileLabels(h.files.map((f) => f.name));
    const counts = new Map();
    for (const t of r.tensors) counts.set(t.file, (counts.get(t.file) ?? 0) + 1);
    facts.push(['Files', el('span', { id: 'set-files' }, `${h.files.length}`, ...h.files.map((f, i) => el('small', { title: f.name }, el('b', {}, labels[i]), ` ${int(counts.get(f.name) ?? 0)} tensors, `, el('span', { class: 'nowrap' }, fmtBytes(f.bytes)))))]);
  }
  facts.push(['Format', formatTitle(h)], ['Size', `${fmtBytes(h.bytes)}`], ['Bytes', int(h.bytes)]);
  if (message) facts.push(['Type', el('span', { class: 'type-text' }, ...breakable(k.type, /(?<=[,{<])/))], ['Framed', k.framed ? 'yes' : 'no']);
  if (k) facts.push(['Hash', el('span', { class: 'hash', title: k.converted_from ? `the message type kiln convert writes for ${k.converted_from}` : k.type }, k.hash)]);
  if (h.gguf) facts.push(['GGUF', `version ${h.gguf.version}, alignment ${h.gguf.alignment}`]);
  facts.push(['Tensors', int(r.tensors.length)]);
  if (message) facts.push(['Directories', int(r.directories.length)]);
  facts.push(['Payloads', fmtBytes(payload)], ['Opened', `${state.checkMs.toFixed(1)} ms`]);
  facts.push(['Read', el('span', {}, el('span', { id: 'read-bytes' }), el('small', {}, 'by ranges: the open reads the heads; a tensor\u2019s bytes are read when it is shown.'))]);
  facts.push(['Memory', el('span', {}, el('span', { id: 'wasm-memory' }), el('small', {}, 'wasm memory, bounded whatever the file\u2019s size.'))]);
  if (r.duplicates?.length) {
    facts.push(['Duplicates', el('span', { class: 'warn' }, `${r.duplicates.length}`, ...r.duplicates.slice(0, 5).map((d) => el('small', {}, `${d.key} in ${d.files.join(' and ')}`)))]);
  }
  return { facts, message };
}

function showModel(r) {
  const h = r.header;
  if (h.files.length > 1) state.name = r.title; // what a set is called: its index, or its first file
  state.file = r; state.tensors = r.tensors; state.dirs = r.directories; state.format = h.format;
  state.openIo = { ...r.io }; state.checkMs = r.checkMs; state.setPlace = r.place;
  showDetected(h);
  $('error').hidden = true;
  $('file').hidden = false;
  $('file-name').replaceChildren(...breakable(r.title));
  $('file-name').title = r.title;
  const { facts, message } = factsOf(r);
  $('header-facts').replaceChildren(...facts.flatMap(([a, b]) => [el('dt', {}, a), el('dd', {}, b)]));
  updateIo();
  // A message's directories, by path; a model's are its files'.
  const dirs = message && (r.directories.length > 1 || r.directories[0]?.path);
  $('dirs-box').hidden = !dirs;
  if (dirs) {
    $('directories').replaceChildren(...r.directories.map((d) => el('li', {},
      el('button', { title: 'Show only these tensors', onclick: () => filterPath(d.path) }, d.path || '(root)'),
      el('span', { class: 'muted' }, `${d.tensors}`))));
  }
  showSetPlace(r);
  const multiFile = h.files.length > 1;
  const labels = multiFile ? new Map(fileLabels(h.files.map((f) => f.name)).map((l, i) => [h.files[i].name, l])) : null;
  setModel(r.tensors, { multiFile, onLink: (j) => { filterPath(null); select(j); }, onRead: updateIo });
  showTable(r.tensors, { labels, onSelect: showTensor, unique: !multiFile && r.directories.length <= 1 });
  document.body.dataset.state = 'ready';
  document.title = `${state.name} \u2014 Kiln inspector`;
  // The open's time as the user sees it: from the file picked or dropped
  // to the frame that shows the table (the next frame's callback).
  const picked = state.pickedAt;
  state.pickedAt = undefined;
  state.drawnMs = undefined;
  if (picked !== undefined) requestAnimationFrame(() => { state.drawnMs = performance.now() - picked; });
  // The metadata after the table: its text can be megabytes (a tokenizer).
  const box = $('meta-box');
  box.dataset.meta = 'pending';
  state.metadata = [];
  $('meta').replaceChildren(el('p', { class: 'muted' }, 'Reading\u2026'));
  const shown = r;
  call({ op: 'metadata', side: 'a' }).then((m) => {
    if (state.file !== shown) return;
    state.metadata = m.metadata ?? [];
    box.hidden = !m.metadata?.length && !m.omitted && !!h.kiln && !message;
    showMetadata(m.metadata ?? [], m.omitted, (i) => call({ op: 'metaValue', side: 'a', i }).then((v) => v.text));
    box.dataset.meta = 'done';
  });
  // A remote file's tensor is read only when picked: every byte shown is
  // a Range request.
  if (!r.tensors.length) showNothing('This file has no tensors.');
  else if (state.source?.url) showNothing(`Read by HTTP Range requests: ${fmtBytes(state.openIo.bytesRead)} so far. Select a tensor to read its bytes.`);
  else {
    // The first tensor's facts and values after the table's frame: the
    // table is not held back by the detail panel.
    const d = $('detail');
    d.replaceChildren();
    d.dataset.stats = 'pending'; d.dataset.values = 'pending';
    requestAnimationFrame(() => setTimeout(() => { if (state.file === shown && selected() < 0) select(firstRow()); }, 0));
  }
}

/**
 * A file of a set opened alone: the module says where it belongs (a GGUF
 * file from its split keys, a safetensors shard from its name), and the
 * page says that the table is part of a model.
 */
function showSetPlace(r) {
  const box = $('set-place');
  const place = r.place;
  box.hidden = !place;
  if (!place) return;
  const gguf = r.header.format === 'gguf';
  const n = place.count;
  box.replaceChildren(
    el('b', {}, `File ${place.no} of ${n} of a ${gguf ? 'GGUF split set' : 'safetensors shard set'}`),
    gguf ? ' (its split.no and split.count say so)' : ' (by its name)',
    place.tensorsCount !== null ? `: the table shows its ${int(r.tensors.length)} tensors of the set\u2019s ${int(place.tensorsCount)}.` : ': the table shows this file\u2019s tensors only.',
    ` Open all ${n} ${gguf ? 'files' : 'shards with their index'} to see the whole model`,
    ...(place.files.length ? [': ', ...place.files.flatMap((x, i) => [i ? ', ' : '', el('code', {}, x)]), '.'] : ['.']));
}

// ---------------------------------------------------------------- wiring

state.samples = await (await fetch('samples/samples.json')).json();
$('sample-select').append(...state.samples.map((s) => el('option', { value: s.file }, s.title)));
document.body.append(el('datalist', { id: 'types' }, knownTypes().map((t) => el('option', { value: t }))));
$('type-text').setAttribute('list', 'types');
setupModes(() => { if (state.source) reopen(); });

$('file-input').addEventListener('change', (e) => { const list = [...e.target.files]; state.pickedAt = performance.now(); if (list.length) openFiles(list); e.target.value = ''; });
$('sample-select').addEventListener('change', (e) => { if (e.target.value) openSample(e.target.value); e.target.value = ''; });
$('open-form').addEventListener('submit', (e) => { e.preventDefault(); reopen(); });
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = $('url-input').value.trim();
  if (url) { resetModes(); openUrl(url); }
});
$('filter').addEventListener('input', () => refreshRows());
$('table-scroll').addEventListener('scroll', () => requestAnimationFrame(renderRows));
window.addEventListener('resize', () => relayout());
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
  if (e.target.tagName === 'INPUT' || selected() < 0 || !$('compare').hidden) return;
  if (e.key === 'ArrowDown') { e.preventDefault(); step(1); }
  if (e.key === 'ArrowUp') { e.preventDefault(); step(-1); }
});

setupCompare(state);

const params = new URLSearchParams(location.search);
if (params.get('sample')) openSample(params.get('sample'));
else if (params.get('url')) {
  $('url-input').value = params.get('url');
  // `type` (and `mode`) are overrides: a file the module recognises needs neither.
  setOverride(params.get('mode'), params.get('type'));
  openUrl(params.get('url'), params.get('name') ?? undefined);
} else document.body.dataset.state = 'empty';

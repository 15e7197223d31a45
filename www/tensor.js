// The tensor panel: a tensor's facts (its name, and the secondary ones:
// its path in the message, its file, its directory), its first values,
// and its statistics with a histogram and, for a matrix, a heatmap.
//
// Statistics of a tensor larger than the worker's sample (4 MiB) are
// computed from that sample, spread evenly over the tensor, and say so;
// a button says what reading all of it costs, and does it on request.
import { $, el, int, fmtNum, fmtBytes, hex, shapeText, nameOf, breakable } from './ui.js';
import { call, cancel, job as newJob } from './rpc.js';
import { histogram, heatmap } from './charts.js';
import { quantText } from './table.js';
import { SAMPLE, hasElements } from './stats.js';

const state = { list: [], tensors: null, scaleOf: new Map(), statsJob: 0, shown: -1, side: 'a', multiFile: false, onLink: () => {}, onRead: () => {} };

/** The model whose tensors the panel shows; `onLink(index)` selects another, `onRead()` after a read. */
export function setModel(tensors, { multiFile, onLink, onRead }) {
  stop();
  state.list = tensors;
  state.tensors = null; // by index, made when the panel first shows a tensor (after the table's frame)
  state.multiFile = multiFile;
  state.onLink = onLink;
  state.onRead = onRead;
  state.scaleOf = new Map();
  for (const t of tensors) {
    const q = t.quant;
    if (!q) continue;
    for (const [j, role] of [[q.scales, 'scales'], [q.outer, 'outer scale']]) {
      if (j !== null && j !== undefined) state.scaleOf.set(j, [...(state.scaleOf.get(j) ?? []), [t.index, role]]);
    }
  }
}

/** Tensor `index` of the model (its number in the module). */
function tensorAt(index) {
  state.tensors ??= new Map(state.list.map((t) => [t.index, t]));
  return state.tensors.get(index);
}

/** Stops the running statistics (another tensor, a comparison, another file). */
export function stop() {
  cancel(state.statsJob);
  state.statsJob = 0;
}

const link = (j, text) => el('button', { class: 'link', onclick: () => state.onLink(j) }, ...breakable(text));
const width = (t) => Number(t.bytes) / Math.max(Number(t.elements), 1);

function facts(t) {
  const kv = [];
  if (state.multiFile && t.file) kv.push(['File', t.file]);
  if (t.path) kv.push(['Path', el('span', {}, ...breakable(t.path))]);
  kv.push(['Index', `${t.index}${t.index_in_directory !== t.index ? ` (${t.index_in_directory} in directory ${t.directory})` : ''}`]);
  if (t.layout) kv.push(['Dtype', `${t.dtype}: a ggml block type (code ${t.dtype_code})`]);
  else if (t.dtype_code === null) kv.push(['Dtype', `${t.dtype}: a dtype Kiln has no code for (its bytes only)`]);
  else kv.push(['Dtype', `${t.dtype} (code ${t.dtype_code})`]);
  kv.push(['Shape', shapeText(t.shape)]);
  if (t.elements !== null) kv.push(['Elements', int(t.elements)]);
  kv.push(['Bytes', Number(t.bytes) < 1024 ? int(t.bytes) : `${int(t.bytes)} (${fmtBytes(t.bytes)})`]);
  kv.push(['Offset', `${int(t.offset)} (${hex(t.offset)})`]);
  if (t.layout) kv.push(['Layout', `${t.layout}, block ${t.block_size} B, ${int(Number(t.bytes) / t.block_size)} blocks, ${quantText(t)}`]);
  if (t.quant) {
    kv.push(['Quantization', `${t.quant.scheme}: groups of ${t.quant.group_size} along axis ${t.quant.axis}`]);
    if (t.quant.scales !== null) kv.push(['Scale tensor', link(t.quant.scales, t.quant.scales_name ?? `#${t.quant.scales}`)]);
    if (t.quant.outer !== null) kv.push(['Outer scale', link(t.quant.outer, t.quant.outer_name ?? `#${t.quant.outer}`)]);
  }
  for (const [j, role] of state.scaleOf.get(t.index) ?? []) {
    kv.push([`${role[0].toUpperCase()}${role.slice(1)} of`, link(j, nameOf(tensorAt(j)))]);
  }
  const w = width(t);
  kv.push(['In place', t.in_place
    ? el('span', {}, el('span', { class: 'badge zero' }, 'aligned'), ' a memory map or a buffer of the file views it as a typed array, no copy')
    : el('span', {}, el('span', { class: 'badge copy' }, t.not_in_place ?? 'not in place'),
      t.not_in_place === 'misaligned' && Number.isInteger(w) ? ` offset not a multiple of ${w}: a view copies it` : ` ${t.not_in_place ?? ''}: a view copies it`)]);
  return el('dl', { class: 'kv' }, kv.flatMap(([a, b]) => [el('dt', {}, a), el('dd', {}, b)]));
}

/** Shows tensor `index`: its facts at once, its values and statistics as the worker reads them. */
export function showTensor(index) {
  stop();
  const t = tensorAt(index);
  state.shown = index;
  const d = $('detail');
  d.dataset.stats = 'pending';
  d.dataset.values = 'pending';
  const values = el('div', { class: 'values' }, el('span', { class: 'muted' }, 'Reading\u2026'));
  d.replaceChildren(el('h2', {}, ...breakable(nameOf(t))), facts(t));
  const closed = hasElements(t);
  d.append(el('h3', {}, closed ? 'First values' : 'First bytes'), values);
  if (t.quant) d.append(el('p', { class: 'note' }, 'Stored bits shown as values; Kiln never applies the scale.'));
  call({ op: 'first', side: state.side, index, count: 16 }).then((r) => {
    if (state.shown !== index) return;
    showFirst(values, t, r);
    d.dataset.values = 'done';
    state.onRead();
  });
  if (!closed) {
    d.append(el('p', { class: 'note' }, t.layout ? `Its values are ${t.layout} blocks, which the inspector does not dequantize: no statistics.` : 'No statistics of a dtype Kiln has no code for.'));
    d.dataset.stats = 'none';
    return;
  }
  if (Number(t.elements) === 0) { d.append(el('p', { class: 'note' }, 'No elements.')); d.dataset.stats = 'none'; return; }
  const box = el('div', { id: 'stats-box' });
  d.append(el('h3', {}, 'Statistics'), box);
  runStats(t, box, false);
}

function runStats(t, box, all) {
  stop();
  const d = $('detail');
  const job = newJob();
  state.statsJob = job;
  d.dataset.stats = 'pending';
  const bar = el('progress', { max: 1, value: 0 });
  const label = el('div', { class: 'progress-label' }, all || Number(t.bytes) <= SAMPLE
    ? `Reading ${fmtBytes(t.bytes)} for ${int(t.elements)} elements\u2026` : `Reading a sample of ${fmtBytes(SAMPLE)}\u2026`);
  const stopButton = el('button', { class: 'button small', id: 'cancel-stats', onclick: () => cancel(job) }, 'Cancel');
  box.replaceChildren(el('div', { class: 'progress-row' }, bar, stopButton), label);
  call({ op: 'stats', side: state.side, job, index: t.index, all }, (p, text) => {
    bar.value = p;
    label.textContent = `${text.replace(/\d+/g, (x) => int(Number(x)))} (${Math.round(100 * p)}%)`;
  }).then((r) => {
    state.onRead();
    if (state.statsJob === job) state.statsJob = 0;
    if (state.shown !== t.index) return;
    if (r.cancelled) {
      box.replaceChildren(el('p', { class: 'note' }, 'Cancelled.'), readAllButton(t, box, all ? 'Read all again' : null));
      d.dataset.stats = 'cancelled';
      return;
    }
    if (r.error) { box.replaceChildren(el('p', { class: 'note' }, `${r.error.code}: ${r.error.message}`)); d.dataset.stats = 'done'; return; }
    showStats(t, box, r);
    d.dataset.stats = 'done';
  });
}

function readAllButton(t, box, text) {
  return el('button', { class: 'button small read-all', id: 'read-all', onclick: () => runStats(t, box, true) },
    text ?? `Read all ${fmtBytes(t.bytes)}`);
}

function showStats(t, box, r) {
  const { min, max, mean, nan, inf, finite } = r;
  const stat = (name, value) => el('div', { class: 'stat' }, el('small', {}, name), el('b', { title: String(value) }, value));
  const source = r.sampled
    ? el('p', { class: 'note sample', id: 'stats-source' },
      el('b', {}, 'A sample: '), `${int(r.elements)} of ${int(r.total)} elements in ${r.runs} runs spread evenly over the tensor, ${fmtBytes(r.bytesRead)} read of ${fmtBytes(r.tensorBytes)}. `,
      readAllButton(t, box, `Read all ${fmtBytes(r.tensorBytes)}`))
    : el('p', { class: 'note', id: 'stats-source' }, `All ${int(r.total)} elements, ${fmtBytes(r.bytesRead)} read${r.bytesRead > r.tensorBytes ? ' (the tensor twice: over 64 MiB is not kept for the histogram)' : ''} in ${Math.round(r.ms)} ms.`);
  const parts = [
    el('div', { class: 'stats' },
      stat('min', finite ? fmtNum(min) : '\u2014'), stat('max', finite ? fmtNum(max) : '\u2014'), stat('mean', finite ? fmtNum(mean) : '\u2014'),
      stat('NaN', int(nan)), stat('Inf', int(inf)), stat('time', `${Math.round(r.ms)} ms`)),
    source,
    el('h3', {}, r.sampled ? 'Histogram (of the sample)' : 'Histogram'),
    finite ? histogram(r.bins, min, max, `${int(finite)} finite values`) : el('p', { class: 'note' }, 'No finite values.'),
  ];
  if (r.heat) {
    const [rows, cols] = t.shape.map(Number);
    const sampled = rows > r.heat.H || cols > r.heat.W;
    const title = `Heatmap (${int(rows)} \u00d7 ${int(cols)}${sampled ? `, ${r.heat.H} \u00d7 ${r.heat.W} cells` : ''})`;
    parts.push(el('h3', {}, title), heatmap(r.heat, r.heat.allRows ? null : `Rows from the sample: ${r.heat.H} of ${int(rows)}.`));
  } else if (t.shape.length === 2 && r.sampled) {
    parts.push(el('p', { class: 'note' }, 'Heatmap: its rows are longer than the sample\u2019s runs; read all to see it.'));
  }
  box.replaceChildren(...parts);
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
  if (Number(t.elements) > r.values.length) box.append(el('span', { class: 'muted more' }, `\u2026 ${int(Number(t.elements) - r.values.length)} more`));
}

/** The panel's text before a tensor is picked. */
export function showNothing(text) {
  stop();
  state.shown = -1;
  const d = $('detail');
  d.replaceChildren(el('p', { class: 'muted' }, text));
  d.dataset.stats = 'none';
  d.dataset.values = 'done';
}

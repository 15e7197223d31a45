// The tensor table: one row per tensor, in the model's listing order
// (a converted model's in its source file's order) until a column is
// sorted, filtered by text, drawn only where it is in view (a file of
// 20,000 tensors has about 40 rows in the DOM).
//
// Every column but Name is as wide as its widest text; Name takes the
// rest, and a name longer than that wraps between its parts (after a '.',
// '_', '-' or '/'): every row is as tall as the longest name needs, at
// most three lines, so no name is cut.
import { $, el, int, fmtBytes, hex, shapeText, nameOf, breakable } from './ui.js';

const PAD = 12; // a cell's left and right padding (style.css)
const NAME_MIN = 360; // the Name column's width below which the Offset column gives way to a longer name (the panel shows it)
const LINE = 16; // a row's line height
const MAX_LINES = 3;

const state = {
  tensors: [], nameLabels: [], rows: [], sort: { key: 'order', dir: 1 }, selected: -1, all: [], columns: [], lines: 1,
  onSelect: () => {}, labels: new Map(), duplicate: new Set(), charPx: 0,
};

/** The bits per weight of a ggml block type (`8.5` for Q8_0's 34 bytes per 32). */
const bitsPerWeight = (t) => {
  const blocks = Number(t.bytes) / t.block_size;
  const per = Number(t.elements) / blocks;
  return Number(((t.block_size * 8) / per).toFixed(2));
};

/** The Quantization cell: a Kiln tensor's scale link, or a block type's bits per weight. */
export function quantText(t) {
  if (t.quant) return `${t.quant.scheme} /${t.quant.group_size}`;
  if (t.layout && t.block_size && t.elements !== null) return `${bitsPerWeight(t)} bpw`;
  return '';
}

const COLUMNS = [
  { key: 'name', label: 'Name' },
  { key: 'dtype', label: 'Dtype', text: (t) => t.dtype, tag: true },
  { key: 'shape', label: 'Shape', text: (t) => shapeText(t.shape), width: (t) => shapeChars(t.shape), max: 26 },
  { key: 'elements', label: 'Elements', num: true, text: (t) => (t.elements === null ? '' : int(t.elements)), width: (t) => (t.elements === null ? 0 : digits(t.elements) * 4 / 3) },
  { key: 'bytes', label: 'Bytes', num: true, text: (t) => fmtBytes(t.bytes), width: () => 9 },
  { key: 'offset', label: 'Offset', num: true, text: (t) => hex(t.offset), width: (t) => 2 + Math.ceil(Math.log2(Number(t.offset) + 1) / 4) },
  { key: 'quant', label: 'Quant', title: 'Quantization: a Kiln tensor\u2019s scales, or a ggml block type\u2019s bits per weight', text: quantText, tag: true, optional: true },
  { key: 'file', label: 'File', text: (t) => state.labels.get(t.file) ?? '', optional: true },
];

/** The decimal digits of a whole number (a number past 2^53 - 1 is a decimal string), without making its text. */
function digits(d) {
  if (typeof d !== 'number') return String(d).length;
  let n = 1;
  for (let p = 10; d >= p && p <= 1e15; p *= 10) n += 1;
  return n;
}

/** The length of shapeText(shape), without making it. */
function shapeChars(shape) {
  let n = shape.length ? 2 * shape.length : 2;
  for (const d of shape) n += digits(d);
  return n;
}

/** The width of one character of the rows' monospace font, in px. */
function measureChar() {
  const probe = el('div', { class: 'row', style: 'position:absolute;visibility:hidden;height:auto' }, el('div', {}, '0'.repeat(50)));
  document.body.append(probe);
  const w = probe.firstChild.getBoundingClientRect().width;
  probe.remove();
  return w > 0 ? (w - PAD) / 50 : 7.2;
}

/** How many lines `text` needs in `perLine` characters, breaking after '.', '_', '-', '/' or a space, else anywhere. */
function linesFor(text, perLine) {
  let lines = 1, used = 0, start = 0;
  // Each part ends after a break character or at the text's end (a scan,
  // not a split: layout() measures every name).
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 46 && c !== 95 && c !== 47 && c !== 45 && c !== 32 && i !== text.length - 1) continue;
    const part = i + 1 - start;
    start = i + 1;
    if (used + part <= perLine) { used += part; continue; }
    if (used > 0) { lines++; used = 0; }
    lines += Math.ceil(part / perLine) - 1;
    used = part % perLine || perLine;
  }
  return lines;
}

/** The text a row shows as its name: the name, and where names repeat, its directory's path after it. */
const nameLabel = (t) => (state.duplicate.has(nameOf(t)) && t.path ? `${nameOf(t)} \u00b7 ${t.path}` : nameOf(t));

/**
 * Shows a model's tensors: `labels` names each file's File cell (a set of
 * files), `onSelect(index)` on a click. `unique`: the model has one file
 * and one directory, whose names the format keeps unique (no name is then
 * looked for twice: 20,000 names hashed cost the open a few ms).
 */
export function showTable(tensors, { labels = null, onSelect, unique = false }) {
  tensors.forEach((t, order) => { t.order = order; }); // the model's own order, for sorting back to it
  state.tensors = tensors;
  state.labels = labels ?? new Map();
  state.onSelect = onSelect;
  state.selected = -1;
  state.duplicate = new Set();
  const names = tensors.map(nameOf);
  if (!unique) {
    const seen = new Set();
    for (const n of names) { if (seen.has(n)) state.duplicate.add(n); seen.add(n); }
  }
  // Each row's label, once: what layout() measures at every width.
  state.nameLabels = state.duplicate.size ? tensors.map(nameLabel) : names;
  state.charPx ||= measureChar();
  state.longestName = state.nameLabels.reduce((a, n) => Math.max(a, n.length), 0);
  state.all = COLUMNS.filter((c) => !c.optional || (c.key === 'file' ? labels !== null : tensors.some((t) => c.text(t)))).map((c) => ({ ...c }));
  for (const c of state.all) {
    if (!c.text) continue;
    // A column's width from its texts' lengths (or, where formatting every
    // cell would cost, a length known without it).
    const width = c.width ?? ((t) => c.text(t).length);
    let longest = c.label.length + 2;
    for (const t of tensors) longest = Math.max(longest, width(t));
    c.ch = Math.min(Math.ceil(longest), c.max ?? Infinity);
    c.wraps = longest > c.ch;
  }
  $('filter').value = '';
  // A new model starts at its first row.
  if (box.top) { $('table-scroll').scrollTop = 0; box.top = 0; }
  fit();
}

/**
 * The scroll box's width inside its scroll bar (`client`) and with it
 * (`offset`), as a ResizeObserver last saw them: reading them from the
 * box would force a layout of the whole page in the middle of an open.
 * Unknown (0) while the box has never been shown; a change lays the
 * table out again before the frame is painted.
 */
const box = { client: 0, offset: 0, height: 0, top: 0 };
const observer = new ResizeObserver(() => {
  const scroll = $('table-scroll');
  const height = scroll.clientHeight;
  if (scroll.clientWidth === box.client && scroll.offsetWidth === box.offset && height === box.height) return;
  const widths = scroll.clientWidth !== box.client || scroll.offsetWidth !== box.offset;
  box.client = scroll.clientWidth;
  box.offset = scroll.offsetWidth;
  box.height = height;
  if (state.all.length && box.client) {
    if (widths) layout();
    refreshRows();
  }
});
let observed = false;

function geometry() {
  const scroll = $('table-scroll');
  if (!observed) {
    observer.observe(scroll);
    // The scroll position as the box says it, kept here for the same reason.
    scroll.addEventListener('scroll', () => { box.top = scroll.scrollTop; }, { passive: true });
    observed = true;
  }
  if (!box.client) { box.client = scroll.clientWidth; box.offset = scroll.offsetWidth; box.height = scroll.clientHeight; }
  return box;
}

/** Lays the table out at the scroll box's width (style.css keeps its scroll bar shown, so rows never change it). */
function fit() {
  layout();
  refreshRows();
}

/** Column widths, and the rows' height from the longest name (and shape) at this width. */
function layout() {
  const px = state.charPx;
  const scroll = geometry();
  const widthOf = (c) => (c.key === 'name' ? 0 : Math.ceil(c.ch * px + PAD + (c.tag ? 12 : 0)));
  const fixed = (cols) => cols.reduce((a, c) => a + widthOf(c), 0);
  // The Offset column stays while the longest name fits beside it on one
  // line (or has NAME_MIN px).
  const longest = Math.min(NAME_MIN, state.longestName * px + PAD + 2);
  state.columns = state.all.filter((c) => c.key !== 'offset' || scroll.client - fixed(state.all) >= longest);
  renderHead();
  const widths = state.columns.map(widthOf);
  const template = state.columns.map((c, i) => (c.key === 'name' ? 'minmax(180px, 1fr)' : `${widths[i]}px`)).join(' ');
  $('table-head').style.gridTemplateColumns = template;
  // The rows are narrower than the head by the scroll bar: the head's
  // columns are moved left as far.
  $('table-head').style.paddingRight = `${scroll.offset - scroll.client}px`;
  $('table-rows').style.setProperty('--cols', template);
  const nameWidth = Math.max(180, scroll.client - widths.reduce((a, b) => a + b, 0));
  const perLine = Math.max(8, Math.floor((nameWidth - PAD - 2) / px));
  const shape = state.columns.find((c) => c.key === 'shape');
  let lines = 1;
  if (state.longestName > perLine) {
    for (const name of state.nameLabels) {
      if (name.length > perLine) lines = Math.max(lines, linesFor(name, perLine));
      if (lines >= MAX_LINES) { lines = MAX_LINES; break; }
    }
  }
  if (shape?.wraps && lines < MAX_LINES) {
    for (const t of state.tensors) {
      lines = Math.max(lines, linesFor(shapeText(t.shape), shape.ch));
      if (lines >= MAX_LINES) { lines = MAX_LINES; break; }
    }
  }
  state.lines = lines;
  $('table-scroll').style.setProperty('--row', `${rowHeight()}px`);
  $('table-scroll').style.setProperty('--lines', lines);
}

const rowHeight = () => 10 + LINE * state.lines;

function sortKey(t, key) {
  switch (key) {
    case 'name': return nameLabel(t);
    case 'shape': return t.shape.length * 1e12 + t.shape.reduce((a, d) => a * 1.0001 + Number(d), 0);
    case 'elements': case 'bytes': case 'offset': return Number(t[key] ?? -1);
    case 'quant': return quantText(t);
    case 'file': return state.labels.get(t.file) ?? '';
    default: return t[key];
  }
}

function renderHead() {
  const head = $('table-head');
  head.replaceChildren(...state.columns.map((c) => el('div', {
    class: `${c.num ? 'num' : ''} ${state.sort.key === c.key ? 'sorted' : ''}`, role: 'columnheader', 'data-key': c.key,
    title: `${c.title ? `${c.title}. ` : ''}Sort by ${c.label.toLowerCase()}: a second click reverses, a third goes back to the model\u2019s own order`,
    onclick: () => {
      // Up, down, then the model's own order again.
      const same = state.sort.key === c.key;
      state.sort = same && state.sort.dir < 0 ? { key: 'order', dir: 1 } : { key: c.key, dir: same ? -1 : 1 };
      renderHead(); refreshRows();
    },
  }, c.label, state.sort.key === c.key ? (state.sort.dir > 0 ? ' \u25b2' : ' \u25bc') : '')));
}

/** Applies the filter and the sort; draws the rows in view. */
export function refreshRows() {
  const q = $('filter').value.trim().toLowerCase();
  let rows = state.tensors;
  if (q) {
    const [path, rest] = q.startsWith('path:') ? [q.slice(5), ''] : [null, q];
    rows = rows.filter((t) => (path === null || (t.path ?? '').toLowerCase() === path) &&
      (!rest || `${nameOf(t)} ${t.path ?? ''} ${t.dtype} ${t.file ?? ''}`.toLowerCase().includes(rest)));
  }
  const { key, dir } = state.sort;
  if (key !== 'order') {
    rows = rows.map((t) => [sortKey(t, key), t]).sort((a, b) => (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1].order - b[1].order)).map((x) => x[1]);
  }
  state.rows = rows;
  $('count').textContent = rows.length === state.tensors.length
    ? `${int(rows.length)} tensors` : `${int(rows.length)} of ${int(state.tensors.length)}`;
  $('table-spacer').style.height = `${rows.length * rowHeight()}px`;
  renderRows();
}

function cell(c, t) {
  if (c.key === 'name') {
    const dup = state.duplicate.has(nameOf(t)) && t.path;
    return el('div', { class: 'name', title: [nameOf(t), t.path ? `in ${t.path}` : null, t.file].filter(Boolean).join('\n') },
      ...breakable(nameOf(t)), dup ? el('span', { class: 'path' }, ' \u00b7 ', ...breakable(t.path)) : null);
  }
  const text = c.text(t);
  if (c.tag) return el('div', {}, text ? el('span', { class: `tag${t.layout ? ' block' : ''}${c.key === 'quant' ? ' q' : ''}` }, text) : '');
  if (c.key === 'shape') return el('div', {}, ...breakable(text));
  if (c.key === 'file') return el('div', { class: 'file', title: t.file }, text);
  return el('div', { class: c.num ? 'num' : '' }, text);
}

export function renderRows() {
  const scroll = geometry();
  const row = rowHeight();
  const first = Math.max(0, Math.floor(scroll.top / row) - 5);
  const last = Math.min(state.rows.length, first + Math.ceil(scroll.height / row) + 10);
  const box = $('table-rows');
  box.style.transform = `translateY(${first * row}px)`;
  const out = [];
  for (let i = first; i < last; i++) {
    const t = state.rows[i];
    out.push(el('div', {
      class: `row${t.index === state.selected ? ' selected' : ''}`, role: 'row', 'data-index': t.index,
      onclick: () => select(t.index),
    }, ...state.columns.map((c) => cell(c, t))));
  }
  box.replaceChildren(...out);
}

/** Selects tensor `index` (the module's number), scrolls it into view and reports it. */
export function select(index) {
  state.selected = index;
  const pos = state.rows.findIndex((t) => t.index === index);
  const scroll = $('table-scroll');
  const row = rowHeight();
  if (pos >= 0 && (pos * row < scroll.scrollTop || (pos + 1) * row > scroll.scrollTop + scroll.clientHeight)) {
    scroll.scrollTop = Math.max(0, pos * row - scroll.clientHeight / 3);
    box.top = scroll.scrollTop;
  }
  renderRows();
  state.onSelect(index);
}

/** Moves the selection up or down a row (the arrow keys). */
export function step(by) {
  const pos = state.rows.findIndex((t) => t.index === state.selected);
  const next = state.rows[pos + by];
  if (pos >= 0 && next) select(next.index);
}

/** Shows only the tensors of the directory at `path` ('' for all). */
export function filterPath(path) {
  $('filter').value = path === null ? '' : `path:${path}`;
  refreshRows();
}

export const firstRow = () => state.rows[0]?.index;
export const selected = () => state.selected;
export const shownRows = () => state.rows;

/** After a resize: the widths and the rows' height again. */
export function relayout() {
  if (state.all.length) fit();
}

// Comparing two models in the inspector: the open model (or set) is A;
// "Compare with…" opens B (one file or several) in the worker as its
// second model, pairs the tensors by name (by path and name where a name
// is not unique in its model), and shows tensors only in one, dtype and
// shape changes, and, read in chunks by the worker (diff.js, with the
// inspector module's TensorDiff doing the arithmetic), byte identity,
// differing elements and the largest absolute and relative difference,
// with progress and a cancel.
import { $, el, int, fmtNum, fmtBytes, shapeText, nameOf, breakable } from './ui.js';
import { call, cancel, job as newJob } from './rpc.js';
import { stop as stopStats } from './tensor.js';
import { fileLabels } from './set.js';
import { messageOf } from './errors.js';

/** A tensor's key across models: its directory path and name. */
const tensorKey = (t) => `${t.path ? `${t.path} \u203a ` : ''}${nameOf(t)}`;

/**
 * The key that pairs a tensor across models: its name when no other tensor
 * of its model has that name (so a safetensors file pairs with its Kiln
 * conversion, whose tensors sit under a message path), else its path and
 * name.
 */
function keysOf(tensors) {
  const count = new Map();
  for (const t of tensors) if (t.name !== null) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  return (t) => (t.name !== null && count.get(t.name) === 1 ? t.name : tensorKey(t));
}

/** Pairs A's and B's tensors by key: rows in A's order, then those only in B. */
export function pairTensors(aTensors, bTensors) {
  const keyA = keysOf(aTensors), keyB = keysOf(bTensors);
  const inB = new Map(bTensors.map((t) => [keyB(t), t]));
  const rows = [];
  for (const a of aTensors) {
    const key = keyA(a);
    const b = inB.get(key);
    inB.delete(key);
    rows.push({ key, a, b: b ?? null });
  }
  for (const [key, b] of inB) rows.push({ key, a: null, b });
  for (const r of rows) r.status = r.a && r.b ? initialStatus(r.a, r.b) : r.a ? 'only-a' : 'only-b';
  return rows;
}

const sameShape = (x, y) => x.shape.length === y.shape.length && x.shape.every((d, i) => String(d) === String(y.shape[i]));
function initialStatus(a, b) {
  if (!sameShape(a, b)) return 'shape';
  if (a.dtype !== b.dtype) return 'dtype';
  return 'pending';
}

/** The status once the worker compared the pair. */
function finalStatus(row) {
  const r = row.result;
  if (row.status !== 'pending' || !r || r.skipped) return row.status;
  if (r.bytesIdentical) return 'identical';
  return r.differing === 0 ? 'equal' : 'differs';
}

const STATUS = {
  'only-a': ['only in A', 'bad'], 'only-b': ['only in B', 'bad'], shape: ['shape changed', 'warn'],
  dtype: ['dtype changed', 'warn'], identical: ['byte-identical', 'ok'], equal: ['equal values, bytes differ', 'ok'],
  differs: ['values differ', 'warn'], pending: ['\u2026', ''],
};

/** Labels of each file of a model of several files (a set), by name. */
const labelsOf = (header) => (header.files.length > 1
  ? new Map(fileLabels(header.files.map((f) => f.name)).map((l, i) => [header.files[i].name, l])) : new Map());

/** The comparison's button and panel; `state` is the page's (its open model A). */
export function setupCompare(state) {
  const input = $('compare-input');
  // Shown while a model is open (not over an error page: A would be the model before it).
  const show = () => {
    const st = document.body.dataset.state;
    if (st !== 'loading') $('compare-label').hidden = !state.file || st === 'error' || st === 'empty';
  };
  new MutationObserver(show).observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
  input.addEventListener('change', (e) => { const list = [...e.target.files]; if (list.length) compareWith(list); e.target.value = ''; });

  // A tensor's dtype and shape, and in a set the file it is in.
  const side = (t, labels) => (t ? [`${t.dtype} ${shapeText(t.shape)}`,
    labels.get(t.file) ? el('span', { class: 'in-file', title: t.file }, labels.get(t.file)) : null] : '\u2014');
  const pct = (x) => `${Number((100 * x).toPrecision(3))}%`;

  async function compareWith(list, bName) {
    const A = state.file;
    if (!A) return;
    const job = newJob();
    const aName = state.name;
    // The open tensor's statistics are not shown while comparing.
    stopStats();
    bName ??= list.length === 1 ? list[0].name : `${list.length} files`;
    document.body.dataset.state = 'loading';
    document.title = `Comparing with ${bName}\u2026`;
    const cmp = { aName, bName, rows: [], job, state: 'opening' };
    state.comparison = cmp;
    const B = await call({ op: 'open', job, side: 'b', files: list.map((f) => ({ blob: f, name: f.name })), types: [...new Set(state.samples.map((x) => x.type).filter((t) => t !== 'tensors'))] });
    if (state.comparison !== cmp) return;
    $('file').hidden = true; $('error').hidden = true; $('compare').hidden = false;
    document.body.dataset.state = 'ready';
    if (B.error || B.cancelled) {
      // A stays open: the panel says why B could not be opened.
      Object.assign(cmp, { state: B.cancelled ? 'cancelled' : 'error', error: B.error ?? { code: 'Aborted', message: 'cancelled' }, file: B.name ?? bName });
      render(cmp);
      return;
    }
    cmp.labelsA = labelsOf(A.header);
    cmp.labelsB = labelsOf(B.header);
    cmp.rows = pairTensors(state.tensors, B.tensors);
    cmp.state = 'running';
    render(cmp);
    document.title = `${aName} \u2194 ${bName} \u2014 Kiln inspector`;
    const todo = cmp.rows.filter((r) => r.a && r.b && r.status !== 'shape');
    const pairs = todo.map((r) => ({ a: r.a.index, b: r.b.index }));
    const r = await call({ op: 'compare', job, pairs }, (p, label) => {
      $('compare-progress').value = p;
      $('compare-label-text').textContent = `${label} (${Math.round(100 * p)}%)`;
    });
    if (state.comparison !== cmp) return;
    (r.results ?? []).forEach((res, i) => { todo[i].result = res; });
    for (const row of cmp.rows) row.status = finalStatus(row);
    cmp.state = r.cancelled ? 'cancelled' : r.error ? 'error' : 'done';
    cmp.ms = r.ms; cmp.bytes = r.bytes; cmp.error = r.error;
    render(cmp);
  }
  window.kilnCompare = compareWith; // for the console

  /** Back to model A's table, as it was. */
  function back() {
    cancel(state.comparison?.job);
    $('compare').hidden = true; $('file').hidden = false;
    state.comparison = null;
    document.title = `${state.name} \u2014 Kiln inspector`;
  }

  function counts(rows) {
    const c = {};
    for (const r of rows) c[r.status] = (c[r.status] ?? 0) + 1;
    return c;
  }

  function render(cmp) {
    const box = $('compare');
    box.dataset.state = cmp.state;
    const c = counts(cmp.rows);
    const chips = Object.entries(STATUS).filter(([k]) => c[k]).map(([k, [label, tone]]) =>
      el('button', {
        class: `chip ${tone}${cmp.filter === k ? ' on' : ''}`, 'data-status': k, title: cmp.filter === k ? 'Show every tensor' : `Show only: ${label}`,
        onclick: () => { cmp.filter = cmp.filter === k ? null : k; render(cmp); },
      }, el('b', {}, int(c[k])), ` ${label}`));
    const running = cmp.state === 'running';
    const head = el('div', { class: 'compare-head' },
      el('h2', {}, el('span', { class: 'side' }, 'A'), ` ${cmp.aName}  `, el('span', { class: 'muted' }, '\u2194'), '  ', el('span', { class: 'side b' }, 'B'), ` ${cmp.bName}`),
      el('button', { class: 'button small', id: 'compare-back', onclick: back }, 'Back to A'));
    const status = el('div', { class: 'progress-row' },
      el('progress', { id: 'compare-progress', max: 1, value: 0, hidden: !running }),
      el('button', { class: 'button small', id: 'compare-cancel', hidden: !running, onclick: () => cancel(cmp.job) }, 'Cancel'),
      el('span', { id: 'compare-label-text', class: 'progress-label' },
        running ? 'Reading both models\u2019 tensors in chunks\u2026'
          : cmp.state === 'cancelled' ? 'Cancelled: the tensors not yet compared show \u2026'
            : cmp.state === 'error' ? `${cmp.error.code}: ${cmp.error.message}`
              : `Compared in ${Math.round(cmp.ms)} ms, ${fmtBytes(cmp.bytes)} read.`));
    const table = el('table', { class: 'compare-table' },
      el('thead', {}, el('tr', {}, ...['Tensor', 'Status', 'A', 'B', 'Differing', 'Max abs diff', 'at [i]: A \u2192 B', 'Max rel diff'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...cmp.rows.filter((r) => !cmp.filter || r.status === cmp.filter).map((r) => row(r, cmp))));
    if (cmp.state === 'error' && cmp.file) {
      // B did not open: what and where, as the error page says it.
      const e = cmp.error;
      const message = messageOf(e);
      box.replaceChildren(head, el('div', { class: 'error-head', id: 'compare-error' },
        el('span', { class: 'code', id: 'compare-error-code' }, e.code ?? 'Error'),
        el('span', {}, el('b', {}, cmp.file), ' could not be opened as model B: ', message)));
      return;
    }
    box.replaceChildren(head, el('div', { class: 'chips' }, ...chips), status,
      el('p', { class: 'muted note' }, 'Relative difference: |a \u2212 b| / max(|a|, |b|). Equal: a = b (so +0 = \u22120) or both NaN. One NaN counts as differing, outside both maxima.'),
      el('div', { class: 'compare-scroll' }, table));
  }

  function row(r, cmp) {
    const [label, tone] = STATUS[r.status];
    const res = r.result;
    const num = (cls, text, title) => el('td', { class: `num ${cls}`, title }, text);
    let cells;
    if (!res || res.skipped) {
      const text = r.status === 'shape' ? 'shapes differ' : r.a && r.b ? '\u2026' : '';
      cells = [num('differing', text), num('max-abs', ''), num('where', ''), num('max-rel', '')];
    } else if (res.mode === 'float') {
      const at = (e) => (e ? `at [${int(e.at)}]: A ${fmtNum(e.a)}, B ${fmtNum(e.b)}` : '');
      cells = [
        num('differing', `${int(res.differing)} of ${int(res.compared)}${res.nanMismatch ? ` (${int(res.nanMismatch)} NaN)` : ''}`),
        num('max-abs', res.maxAbs ? fmtNum(res.maxAbs.value) : '0', at(res.maxAbs)),
        num('where', res.maxAbs ? `[${int(res.maxAbs.at)}]: ${fmtNum(res.maxAbs.a)} \u2192 ${fmtNum(res.maxAbs.b)}` : ''),
        num('max-rel', res.maxRel ? pct(res.maxRel.value) : '0', at(res.maxRel)),
      ];
    } else {
      const unit = res.how === 'bytes' ? 'bytes' : '';
      cells = [num('differing', res.mode === 'none' ? 'not comparable' : `${int(res.differing)} of ${int(res.compared)}${unit ? ` ${unit}` : ''}`), num('max-abs', '\u2014'), num('where', ''), num('max-rel', '\u2014')];
    }
    return el('tr', { 'data-key': r.key, 'data-status': r.status },
      el('td', { class: 'name', title: `${r.key}${r.a?.file ? `\nA: ${r.a.file}` : ''}${r.b?.file ? `\nB: ${r.b.file}` : ''}` }, ...breakable(r.key)),
      el('td', {}, el('span', { class: `chip ${tone}` }, label)),
      el('td', { class: 'side-a' }, side(r.a, cmp.labelsA)), el('td', { class: 'side-b' }, side(r.b, cmp.labelsB)), ...cells);
  }

  // ?sample=A&compare=B (bundled samples, comma-separated for a set).
  const params = new URLSearchParams(location.search);
  if (params.get('compare')) {
    const names = params.get('compare').split(',');
    const start = async () => {
      const blobs = await Promise.all(names.map(async (n) => new File([await (await fetch(`samples/${n}`)).blob()], n.split('/').pop())));
      compareWith(blobs, names.join(', '));
    };
    const wait = new MutationObserver(() => {
      if (document.body.dataset.state === 'ready' && state.file && !state.comparison) { wait.disconnect(); start(); }
    });
    wait.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
  }
}

// The worker's comparison of two models: for each pair of tensors (one in
// each model, matched by the page), both tensors' bytes are read a few MiB
// at a time from their own files and fed to the inspector module's
// TensorDiff, which does the arithmetic (byte identity, differing
// elements, the largest absolute and relative difference; docs/browser.md
// defines them). One job compares every pair, with progress over the
// bytes of all of them, and stops when its signal fires.
import { TensorDiff } from './inspect/kiln_inspect.js';
import { hasElements } from './stats.js';

const CHUNK = 4 << 20; // bytes per read of the wider of the two tensors

const sameShape = (x, y) => x.shape.length === y.shape.length && x.shape.every((d, i) => String(d) === String(y.shape[i]));

/**
 * How a pair is compared: by elements (both have elements, the same
 * shape), by bytes (the same block type or foreign dtype and length), or
 * not at all (`why` says why).
 */
export function plan(ta, tb) {
  if (!sameShape(ta, tb)) return { how: 'none', why: 'shape' };
  if (hasElements(ta) && hasElements(tb)) return { how: 'elements', bytes: Math.max(Number(ta.bytes), Number(tb.bytes)) };
  if (ta.dtype === tb.dtype && String(ta.bytes) === String(tb.bytes)) return { how: 'bytes', bytes: Number(ta.bytes) };
  return { how: 'none', why: 'dtype' };
}

const read = (r, at, len, signal) => (len ? r.source.read(at, len, signal) : new Uint8Array(0));

/** Compares one pair; `step(bytes)` reports progress. */
async function comparePair(ra, ta, rb, tb, how, signal, step) {
  const t0 = performance.now();
  const diff = how === 'bytes' ? TensorDiff.bytes() : new TensorDiff(ta.dtype_code, tb.dtype_code);
  try {
    if (how === 'bytes') {
      const total = Number(ta.bytes), offA = Number(ta.offset), offB = Number(tb.offset);
      for (let at = 0; at < total; at += CHUNK) {
        const len = Math.min(CHUNK, total - at);
        const [a, b] = await Promise.all([read(ra, offA + at, len, signal), read(rb, offB + at, len, signal)]);
        diff.update(a, b, len);
        step(len);
      }
    } else {
      const n = Number(ta.elements);
      const widest = Math.max(Number(ta.bytes), Number(tb.bytes)) / Math.max(n, 1);
      // A multiple of 8 elements: a chunk of a packed dtype starts on a byte.
      const per = Math.max(8, Math.floor(CHUNK / Math.max(widest, 0.5) / 8) * 8);
      for (let first = 0; first < n; first += per) {
        const count = Math.min(per, n - first);
        const [atA, lenA] = ra.kiln.elementBytes(ra.index, first, count);
        const [atB, lenB] = rb.kiln.elementBytes(rb.index, first, count);
        const [a, b] = await Promise.all([read(ra, atA, lenA, signal), read(rb, atB, lenB, signal)]);
        diff.update(a, b, count);
        step(Math.max(lenA, lenB));
      }
    }
    return { ...diff.summary(), ms: performance.now() - t0 };
  } finally {
    diff.free();
  }
}

/**
 * The `compare` op: `pairs` is [{ a, b }], each a tensor's index in model
 * A and in model B (`reader(index)` gives where to read it). Resolves to
 * one result per pair (the DiffSummary, or `{ skipped: why }`), or to
 * `{ cancelled: true, results }` when `signal` fired.
 */
export async function compareTensors(pairs, A, B, { signal, progress }) {
  const t0 = performance.now();
  const jobs = pairs.map(({ a, b }) => {
    const ta = A.tensor(a), tb = B.tensor(b);
    return { ra: A.reader(a), ta, rb: B.reader(b), tb, ...plan(ta, tb) };
  });
  const total = jobs.reduce((s, j) => s + (j.bytes ?? 0), 0);
  let done = 0, last = 0, read = 0;
  const results = [];
  for (let i = 0; i < jobs.length; i++) {
    const j = jobs[i];
    if (j.how === 'none') { results.push({ skipped: j.why }); continue; }
    const step = (bytes) => {
      done += bytes; read += bytes;
      const now = performance.now();
      if (now - last > 50 || done === total) {
        last = now;
        progress(total ? done / total : 1, `Comparing tensor ${i + 1} of ${jobs.length}`);
      }
    };
    try {
      results.push({ how: j.how, ...(await comparePair(j.ra, j.ta, j.rb, j.tb, j.how, signal, step)) });
    } catch (e) {
      if (e.code === 'Aborted' || signal?.aborted) return { cancelled: true, done: results.length, results };
      throw e;
    }
  }
  return { results, ms: performance.now() - t0, bytes: read };
}

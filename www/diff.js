// The worker's comparison of two models: for each pair of tensors (one in
// each model, matched by the page), both tensors' bytes are read a few MiB
// at a time from their own files and fed to kiln-wasm's TensorDiff, which
// does the arithmetic (byte identity, differing elements, the largest
// absolute and relative difference; docs/browser.md defines them). One
// job compares every pair, with progress over the bytes of all of them,
// and stops at a cancel between two chunks.
import { TensorDiff } from './inspect/kiln_inspect.js';

const CHUNK = 4 << 20; // bytes per read of the wider of the two tensors

/** The tensor facts of an open file (parsed once per file, by the worker's file entry). */
const tensor = (f, index) => f.tensors[index];

const sameShape = (x, y) => x.shape.length === y.shape.length && x.shape.every((d, i) => d === y.shape[i]);

/**
 * How a pair is compared: by elements (both closed dtypes, the same
 * shape), by bytes (both opaque with the same layout and length), or not
 * at all (`why` says why).
 */
export function plan(ta, tb) {
  if (!sameShape(ta, tb)) return { how: 'none', why: 'shape' };
  const opaque = ta.layout !== null || tb.layout !== null;
  if (!opaque) return { how: 'elements', bytes: Math.max(ta.byteLength, tb.byteLength) };
  if (ta.dtypeCode === tb.dtypeCode && ta.byteLength === tb.byteLength) return { how: 'bytes', bytes: ta.byteLength };
  return { how: 'none', why: 'dtype' };
}

async function read(f, at, len, io) {
  const bytes = len ? await f.source.read(at, len) : new Uint8Array(0);
  io.bytesRead += bytes.length; io.requests += 1;
  return bytes;
}

/** Compares one pair; `step(bytes)` reports progress; false when cancelled. */
async function comparePair(fa, ta, fb, tb, how, { io, isCancelled, step }) {
  const t0 = performance.now();
  let diff;
  if (how === 'bytes') {
    diff = TensorDiff.bytes(); // opaque: the payloads as bytes
    for (let at = 0; at < ta.byteLength; at += CHUNK) {
      const len = Math.min(CHUNK, ta.byteLength - at);
      const [a, b] = await Promise.all([read(fa, ta.byteOffset + at, len, io), read(fb, tb.byteOffset + at, len, io)]);
      if (isCancelled()) { diff.free(); return null; }
      diff.update(a, b, len);
      step(len);
    }
  } else {
    diff = new TensorDiff(ta.dtypeCode, tb.dtypeCode);
    const n = ta.elements;
    const widest = Math.max(ta.byteLength, tb.byteLength) / Math.max(n, 1);
    // A multiple of 8 elements: a chunk of a packed dtype starts on a byte.
    const per = Math.max(8, Math.floor(CHUNK / Math.max(widest, 0.5) / 8) * 8);
    for (let first = 0; first < n; first += per) {
      const count = Math.min(per, n - first);
      const [atA, lenA] = fa.kiln.elementBytes(ta.index, first, count);
      const [atB, lenB] = fb.kiln.elementBytes(tb.index, first, count);
      const [a, b] = await Promise.all([read(fa, atA, lenA, io), read(fb, atB, lenB, io)]);
      if (isCancelled()) { diff.free(); return null; }
      diff.update(a, b, count);
      step(Math.max(lenA, lenB));
    }
  }
  const summary = diff.summary();
  diff.free();
  return { ...summary, ms: performance.now() - t0 };
}

/**
 * The `compare` op: `pairs` is [{ a: { file, index }, b: { file, index } }]
 * (slots of the open files, each tensor's index in its file). Replies
 * with one result per pair: the DiffSummary, or `{ skipped: why }`.
 */
export async function compareTensors({ job, pairs }, { files, io, cancelled, memory }) {
  const t0 = performance.now();
  const before = io.bytesRead;
  const jobs = pairs.map(({ a, b }) => {
    const fa = files[a.file], fb = files[b.file];
    const ta = tensor(fa, a.index), tb = tensor(fb, b.index);
    return { fa, ta, fb, tb, ...plan(ta, tb) };
  });
  const total = jobs.reduce((s, j) => s + (j.bytes ?? 0), 0);
  let done = 0, last = 0;
  const results = [];
  const isCancelled = () => cancelled.has(job);
  for (let i = 0; i < jobs.length; i++) {
    const j = jobs[i];
    if (j.how === 'none') { results.push({ skipped: j.why }); continue; }
    const step = (bytes) => {
      done += bytes;
      const now = performance.now();
      if (now - last > 50 || done === total) {
        last = now;
        postMessage({ job, progress: total ? done / total : 1, label: `Comparing tensor ${i + 1} of ${jobs.length}` });
      }
    };
    const r = await comparePair(j.fa, j.ta, j.fb, j.tb, j.how, { io, isCancelled, step });
    if (r === null) return { cancelled: true, done: results.length, results, io: memory() };
    results.push({ how: j.how, ...r });
  }
  return { results, ms: performance.now() - t0, bytes: io.bytesRead - before, io: memory() };
}

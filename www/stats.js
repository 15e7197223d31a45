// A tensor's values in the worker: its first values, and its statistics
// (min, max, mean, NaN and Inf counts, a 64-bin histogram and, for a
// matrix, a heatmap of at most 256 x 256 cells), read by ranges.
//
// A tensor of more than SAMPLE bytes is summarised from a sample unless
// the caller asks for all of it: RUNS runs of consecutive elements (whole
// rows of a matrix), spread evenly from its first element to its last,
// SAMPLE bytes in all, read together. All of a tensor is read CHUNK bytes
// at a time, AHEAD reads in flight; its bytes are kept for the
// histogram's second pass only up to KEEP bytes (a larger tensor is read
// twice). The heatmap's cells are picked from the chunks as they pass, so
// no read is made for it.

/** @typedef {{ kiln: any, index: number, source: { read: Function } }} Reader */

export const SAMPLE = 4 << 20;
const RUNS = 16;
const CHUNK = 4 << 20;
const AHEAD = 2;
const KEEP = 64 << 20;
const BINS = 64;
const HEAT = 256;

const EXACT = {
  f64: Float64Array, f32: Float32Array, i32: Int32Array, u32: Uint32Array, i16: Int16Array, u16: Uint16Array,
  i8: Int8Array, u8: Uint8Array, bool: Uint8Array, i64: BigInt64Array, u64: BigUint64Array,
};

/** Whether the module can give a tensor's elements as numbers (not a block type, not a dtype Kiln lacks). */
export const hasElements = (t) => t.layout === null && t.dtype_code !== null && t.elements !== null;

/** Elements `first..first + count` as numbers: exact for the plain types (so 64-bit integers stay whole), else widened by the module. */
function decode(r, t, bytes, first, count) {
  const exact = EXACT[t.dtype];
  if (exact) {
    const copy = bytes.slice(); // its own buffer: aligned at 0
    return new exact(copy.buffer, 0, Math.floor(copy.length / exact.BYTES_PER_ELEMENT));
  }
  return r.kiln.widenBytes(r.index, bytes, first, count);
}

async function readElements(r, t, first, count, signal) {
  const [at, len] = r.kiln.elementBytes(r.index, first, count);
  const bytes = len ? await r.source.read(at, len, signal) : new Uint8Array(0);
  return { bytes, values: decode(r, t, bytes, first, count) };
}

/** The first `count` values (or, for a tensor with no elements to show, its first 64 bytes). */
export async function firstValues(r, t, count, signal) {
  if (!hasElements(t)) {
    const n = Math.min(64, Number(t.bytes));
    return { bytes: n ? await r.source.read(Number(t.offset), n, signal) : new Uint8Array(0) };
  }
  const n = Math.min(count, Number(t.elements));
  if (!n) return { values: [] };
  const { values } = await readElements(r, t, 0, n, signal);
  return { values: Array.from(values, (v) => (typeof v === 'bigint' ? v.toString() : v)) };
}

/**
 * Which elements to read: `[[first, count], ...]` in order, and whether
 * that is a sample. Runs start at a multiple of 8 elements (a packed
 * dtype's range starts on a byte) or, in a matrix, at a row.
 */
export function plan(t, all) {
  const n = Number(t.elements);
  const bytes = Number(t.bytes);
  const width = bytes / Math.max(n, 1);
  if (all || bytes <= SAMPLE) {
    const per = Math.max(8, Math.floor(CHUNK / Math.max(width, 0.125) / 8) * 8);
    const chunks = [];
    for (let first = 0; first < n; first += per) chunks.push([first, Math.min(per, n - first)]);
    return { chunks, sampled: false };
  }
  const cols = t.shape.length === 2 ? Number(t.shape[1]) : 0;
  const rowBytes = cols * width;
  let unit = 8, run;
  if (cols && rowBytes <= SAMPLE / 4) {
    // Whole rows, so the heatmap has rows to show.
    unit = cols;
    run = Math.max(1, Math.floor(SAMPLE / RUNS / rowBytes)) * cols;
  } else {
    run = Math.max(8, Math.floor(SAMPLE / RUNS / width / 8) * 8);
  }
  const runs = Math.max(1, Math.min(RUNS, Math.floor(SAMPLE / (run * width))));
  const units = Math.floor(n / unit);
  const per = run / unit;
  const chunks = [];
  for (let i = 0; i < runs; i++) {
    const startUnit = runs === 1 ? 0 : Math.floor((i * (units - per)) / (runs - 1));
    let first = startUnit * unit;
    if (unit === cols && cols % 2 && first % 2) first -= 1; // a packed dtype's range starts on a byte
    chunks.push([first, Math.min(run, n - first)]);
  }
  return { chunks, sampled: true, rowRuns: unit === cols };
}

/**
 * The heatmap's cells: for a matrix, H rows by W columns, each cell one
 * element. When sampled, the rows are picked among those the sample holds.
 */
function heatPlan(t, chunks, sampled, rowRuns) {
  if (t.shape.length !== 2) return null;
  const rows = Number(t.shape[0]), cols = Number(t.shape[1]);
  if (rows * cols < 2) return null;
  let rowOf, count;
  if (!sampled) { count = rows; rowOf = (i) => i; }
  else if (rowRuns) {
    const held = [];
    for (const [first, n] of chunks) {
      for (let r = Math.ceil(first / cols); (r + 1) * cols <= first + n; r++) held.push(r);
    }
    count = held.length; rowOf = (i) => held[i];
  } else return null;
  if (!count) return null;
  const H = Math.min(count, HEAT), W = Math.min(cols, HEAT);
  const picked = Array.from({ length: H }, (_, y) => rowOf(Math.floor((y * count) / H)));
  const at = new Float64Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) at[y * W + x] = picked[y] * cols + Math.floor((x * cols) / W);
  return { W, H, at, cells: new Float64Array(W * H).fill(NaN), next: 0, rows: picked, allRows: !sampled || picked.length === rows };
}

/** Takes the cells whose elements are in `values` (elements `first..`), in order. */
function takeCells(heat, values, first) {
  if (!heat) return;
  const end = first + values.length;
  while (heat.next < heat.at.length && heat.at[heat.next] < first) heat.next++;
  while (heat.next < heat.at.length && heat.at[heat.next] < end) {
    heat.cells[heat.next] = Number(values[heat.at[heat.next] - first]);
    heat.next++;
  }
}

/**
 * Reads `chunks` and calls `each(values, first, bytes)` for each in order:
 * a sample's runs all at once, all of a tensor AHEAD reads at a time.
 */
async function readChunks(r, t, chunks, together, signal, each) {
  let next = 0;
  const start = () => {
    const [first, count] = chunks[next++];
    const p = readElements(r, t, first, count, signal).then((got) => ({ ...got, first, count }));
    p.catch(() => {}); // a read after the one that failed (a cancel) is not awaited: its rejection is no error
    return p;
  };
  const inFlight = [];
  while (inFlight.length < together && next < chunks.length) inFlight.push(start());
  while (inFlight.length) {
    const got = await inFlight.shift();
    if (next < chunks.length) inFlight.push(start());
    await each(got);
  }
}

/**
 * Statistics of tensor `t` (read through `r`): from a sample unless `all`,
 * `progress(fraction, label)` between chunks; throws the source's Aborted
 * error when `signal` fires.
 */
export async function tensorStats(r, t, { all = false, signal, progress = () => {} } = {}) {
  const t0 = performance.now();
  const { chunks, sampled, rowRuns } = plan(t, all);
  const n = Number(t.elements);
  const heat = heatPlan(t, chunks, sampled, rowRuns);
  let min = Infinity, max = -Infinity, sum = 0, nan = 0, inf = 0, finite = 0, elements = 0, bytesRead = 0;
  const kept = [];
  let keptBytes = 0;
  const steps = chunks.length * 2;
  let step = 0;
  const label = (what, done) => `${what}: ${sampled ? `run ${done} of ${chunks.length}` : `${Math.min(n, done)} of ${n} elements`}`;
  await readChunks(r, t, chunks, sampled ? chunks.length : AHEAD, signal, ({ bytes, values, first, count }) => {
    bytesRead += bytes.length;
    keptBytes += values.byteLength;
    if (keptBytes <= KEEP) kept.push(values);
    for (let i = 0; i < values.length; i++) {
      const x = Number(values[i]);
      if (x !== x) nan++;
      else if (x === Infinity || x === -Infinity) inf++;
      else { finite++; sum += x; if (x < min) min = x; if (x > max) max = x; }
    }
    elements += values.length;
    takeCells(heat, values, first);
    progress(++step / steps, label('Min, max, mean', sampled ? step : first + count));
  });
  const bins = new Float64Array(BINS);
  const span = max - min;
  const bin = (values) => {
    for (let i = 0; i < values.length; i++) {
      const x = Number(values[i]);
      if (x === x && x !== Infinity && x !== -Infinity) bins[span > 0 ? Math.min(BINS - 1, Math.floor(((x - min) / span) * BINS)) : 0]++;
    }
  };
  if (finite > 0) {
    if (keptBytes <= KEEP) {
      for (const values of kept) bin(values);
    } else {
      await readChunks(r, t, chunks, AHEAD, signal, ({ bytes, values, first, count }) => {
        bytesRead += bytes.length;
        bin(values);
        progress(++step / steps, label('Histogram', first + count));
      });
    }
  }
  kept.length = 0;
  return {
    min, max, mean: finite ? sum / finite : NaN, nan, inf, finite, bins,
    heat: heat && { W: heat.W, H: heat.H, cells: heat.cells, allRows: heat.allRows },
    sampled, runs: chunks.length, elements, total: n, bytesRead, tensorBytes: Number(t.bytes),
    ms: performance.now() - t0,
  };
}

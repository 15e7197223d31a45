// The inspector's reader, in a Web Worker: it opens a file by ranges
// (a Kiln file with kiln-wasm's openReader, driven by the core's
// incremental checker, which says which bytes it needs; a safetensors or
// GGUF file with openModel, which reads its head alone through
// kiln-convert's readers; a Blob's slice() or an HTTP Range request each) and reads a tensor's bytes in chunks for its values, statistics,
// histogram and heatmap, with progress and cancel. Nothing reads a whole
// file; the page's main thread never blocks.
//
// Memory: wasm memory holds the checker's scratch (the record image and
// the largest directory head) and the heads; a tensor is read CHUNK bytes
// at a time, its raw chunks kept for the histogram's second pass only
// while they total at most KEEP bytes. The bound the tests assert:
// wasm memory at most 64 MiB plus the heads, whatever the file's size.
import init, { KilnFile, openModel } from './inspect/kiln_inspect.js';
import { compareTensors } from './diff.js';

const CHUNK = 4 << 20; // bytes per read of a tensor
const KEEP = 64 << 20; // raw bytes kept for the second pass
// The check asks for many small ranges (a gap or a packed tail per
// tensor): each read of less than WINDOW bytes reads WINDOW, and the next
// asks are served from it while they fall inside (see windowed(): in
// order, the window grows to WINDOW_MAX).
const WINDOW = 64 << 10;
const WINDOW_MAX = 1 << 20;
const wasm = await init();
let kiln = null;
let source = null;
// Every open file, by slot: a set of files (shards, or the two sides of a
// comparison) is one file per slot; `kiln` and `source` are the last one.
const files = [];
const io = { bytesRead: 0, requests: 0 };
const cancelled = new Set();

class RangeError_ extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

/** A source of bytes: a Blob (File) or a URL served with Range requests. */
function blobSource(blob) {
  return {
    length: blob.size,
    readSync(at, len) { return new Uint8Array(new FileReaderSync().readAsArrayBuffer(blob.slice(at, at + len))); },
    async read(at, len) { return new Uint8Array(await blob.slice(at, at + len).arrayBuffer()); },
  };
}

function rangeXhr(url, at, len) {
  const x = new XMLHttpRequest();
  x.open('GET', url, false);
  x.responseType = 'arraybuffer';
  x.setRequestHeader('Range', `bytes=${at}-${at + len - 1}`);
  try { x.send(); } catch {
    throw new RangeError_('Network', `${url} could not be fetched: the server refused the request or does not allow this page (CORS), or it is unreachable.`);
  }
  if (x.status === 200) throw new RangeError_('NoRange', `${url}: the server ignored the Range request (it sent the whole file, status 200). Opening a file from a URL needs a server that supports HTTP Range requests.`);
  if (x.status !== 206) throw new RangeError_('Http', `${url}: the server answered ${x.status} ${x.statusText} to a Range request.`);
  return x;
}

/** A URL read by Range requests: first one byte, which says the length (and whether the server serves ranges at all, without downloading the file when it does not). */
async function urlSource(url) {
  let probe;
  try {
    probe = await fetch(url, { headers: { Range: 'bytes=0-0' }, cache: 'no-store' });
  } catch {
    throw new RangeError_('Network', `${url} could not be fetched: the server is unreachable, or it does not allow this page to read it (CORS: it must send Access-Control-Allow-Origin and allow the Range header).`);
  }
  if (probe.status === 200) {
    probe.body?.cancel();
    throw new RangeError_('NoRange', `${url}: the server ignored the Range request (it began sending the whole file, status 200). Opening a file from a URL needs a server that supports HTTP Range requests.`);
  }
  if (probe.status !== 206) {
    probe.body?.cancel();
    throw new RangeError_('Http', `${url}: the server answered ${probe.status} ${probe.statusText}.`);
  }
  const total = /\/(\d+)$/.exec(probe.headers.get('Content-Range') ?? '');
  io.bytesRead += (await probe.arrayBuffer()).byteLength; io.requests += 1;
  if (!total) throw new RangeError_('NoRange', `${url}: the server's Range answer has no total length (Content-Range is missing, or not exposed to this page by CORS: Access-Control-Expose-Headers).`);
  return {
    length: Number(total[1]),
    readSync(at, len) { return new Uint8Array(rangeXhr(url, at, len).response); },
    async read(at, len) {
      const r = await fetch(url, { headers: { Range: `bytes=${at}-${at + len - 1}` } });
      if (r.status !== 206) throw new RangeError_('NoRange', `${url}: the server answered ${r.status} to a Range request.`);
      return new Uint8Array(await r.arrayBuffer());
    },
  };
}

function counted(read) {
  return (at, len) => { const b = read(at, len); io.bytesRead += b.length; io.requests += 1; return b; };
}

/**
 * The check's reader: small reads through one read-ahead window. A miss
 * that starts within WINDOW of the window's end (the check walking
 * through many small payloads in order) doubles the next window, up to
 * WINDOW_MAX: a file of 10,000 small tensors is read in a few reads, not
 * dozens (each a FileReaderSync call, or an HTTP request). A miss
 * elsewhere starts again at WINDOW, so a read-ahead past what the check
 * needs is at most WINDOW, or the bytes the check just read in order.
 */
function windowed(src) {
  const read = counted(src.readSync);
  let base = 0, buf = new Uint8Array(0), size = WINDOW;
  return (at, len) => {
    if (at >= base && at + len <= base + buf.length) return buf.subarray(at - base, at - base + len);
    if (len >= WINDOW) return read(at, len);
    const end = base + buf.length;
    size = buf.length && at >= end && at < end + WINDOW ? Math.min(2 * size, WINDOW_MAX) : WINDOW;
    buf = read(at, Math.min(size, src.length - at));
    base = at;
    return buf.subarray(0, len);
  };
}

function errorOf(e) {
  return { code: e.code ?? 'Error', message: e.message, offset: e.offset, fault: e.fault };
}

function memory() { return { ...io, wasmMemory: wasm.memory.buffer.byteLength }; }

/** The bytes around `offset` for the error's hex view (320 at most). */
function around(offset) {
  const at = offset === undefined ? 0 : Math.min(offset, Math.max(source.length - 1, 0));
  // Arithmetic, not `& ~15`: a bitwise operator cuts an offset past 2 GiB to 32 bits.
  const start = Math.max(0, at - (at % 16) - 128);
  const len = Math.min(source.length - start, 320);
  return { start, bytes: len > 0 ? counted(source.readSync)(start, len) : new Uint8Array(0) };
}

async function open({ blob, url, type, framed, format, slot = 0 }) {
  if (slot === 0) {
    for (const f of files) f?.kiln.free();
    files.length = 0; kiln = null;
    io.bytesRead = 0; io.requests = 0;
  } else if (files[slot]) { files[slot].kiln.free(); files[slot] = undefined; }
  const t0 = performance.now();
  try {
    source = blob ? blobSource(blob) : await urlSource(url);
  } catch (e) { return { error: errorOf(e), io: memory() }; }
  try {
    // A model file's head is read in growing appended reads, each asked
    // once: no window.
    kiln = format === 'safetensors' || format === 'gguf'
      ? openModel(source.length, counted(source.readSync), format)
      : KilnFile.openReader(source.length, windowed(source), type, framed);
  } catch (e) {
    const error = errorOf(e);
    let hex = null;
    try { hex = around(e.offset); } catch { /* the source failed: no bytes to show */ }
    return { error, hex, length: source.length, io: memory() };
  }
  const checkMs = performance.now() - t0;
  const header = kiln.header;
  const value = header.format !== 'kiln' || header.typeText === 'tensors' ? null : kiln.value();
  const t1 = performance.now();
  // The tensors' facts go to the page as one JSON text in UTF-8, in a
  // buffer transferred, not cloned (a structured clone of 10,000 objects
  // cost as much as the check); this worker parses its own copy only when
  // it first needs a tensor's facts.
  const tensorsJson = kiln.tensorsJson();
  files[slot] = fileEntry(kiln, source, tensorsJson.slice());
  const factsMs = performance.now() - t1;
  return {
    header, tensorsJson, directories: kiln.directories(), metadata: kiln.metadata(), value, checkMs, factsMs,
    postedAt: performance.timeOrigin + performance.now(), io: memory(), transfer: [tensorsJson.buffer],
  };
}

/** An open file: its reader, its source, and its tensors' facts (parsed from `json` when first asked). */
function fileEntry(kiln, source, json) {
  let tensors = null;
  return {
    kiln, source,
    get tensors() {
      if (!tensors) { tensors = JSON.parse(new TextDecoder().decode(json)); json = null; }
      return tensors;
    },
  };
}

/** Elements first..first+count of tensor `index` as numbers. */
function decode({ kiln }, t, bytes, first, count) {
  const exact = { f64: Float64Array, f32: Float32Array, i32: Int32Array, u32: Uint32Array, i16: Int16Array, u16: Uint16Array, i8: Int8Array, u8: Uint8Array, bool: Uint8Array, i64: BigInt64Array, u64: BigUint64Array }[t.dtype];
  if (exact) {
    const copy = bytes.slice(); // its own buffer: aligned at 0
    return new exact(copy.buffer, 0, Math.floor(copy.length / exact.BYTES_PER_ELEMENT));
  }
  return kiln.widenBytes(t.index, bytes, first, count);
}

async function readElements(f, t, first, count) {
  const [at, len] = f.kiln.elementBytes(t.index, first, count);
  const bytes = await f.source.read(at, len);
  io.bytesRead += bytes.length; io.requests += 1;
  return decode(f, t, bytes, first, count);
}

async function firstValues({ index, count, file = 0 }) {
  const f = files[file];
  const { source } = f;
  const t = f.tensors[index];
  if (t.layout) {
    const n = Math.min(64, t.byteLength);
    const bytes = n ? await source.read(t.byteOffset, n) : new Uint8Array(0);
    io.bytesRead += bytes.length; io.requests += 1;
    return { bytes, io: memory() };
  }
  const n = Math.min(count, t.elements);
  const values = n ? await readElements(f, t, 0, n) : [];
  return { values: Array.from(values), io: memory() };
}

async function stats({ job, index, file = 0 }) {
  const f = files[file];
  const { kiln, source } = f;
  const t = f.tensors[index];
  const n = t.elements;
  const perChunk = Math.max(1, Math.floor((CHUNK * n) / Math.max(t.byteLength, 1)));
  const t0 = performance.now();
  const before = io.bytesRead;
  let min = Infinity, max = -Infinity, sum = 0, nan = 0, inf = 0, finite = 0;
  const kept = [];
  let keptBytes = 0;
  const steps = Math.ceil(n / perChunk) * 2;
  let step = 0;
  for (let first = 0; first < n; first += perChunk) {
    const count = Math.min(perChunk, n - first);
    const [at, len] = kiln.elementBytes(t.index, first, count);
    const bytes = await source.read(at, len);
    io.bytesRead += bytes.length; io.requests += 1;
    if (cancelled.has(job)) return { cancelled: true, io: memory() };
    keptBytes += bytes.length;
    if (keptBytes <= KEEP) kept.push([first, count, bytes]);
    const a = decode(f, t, bytes, first, count);
    for (let i = 0; i < a.length; i++) {
      const x = Number(a[i]);
      if (x !== x) nan++;
      else if (x === Infinity || x === -Infinity) inf++;
      else { finite++; sum += x; if (x < min) min = x; if (x > max) max = x; }
    }
    postMessage({ job, progress: ++step / steps, label: `Min, max, mean: ${Math.min(n, first + count)} of ${n} elements` });
  }
  const bins = new Float64Array(64);
  const span = max - min;
  if (finite > 0) {
    const again = keptBytes <= KEEP;
    for (let first = 0, k = 0; first < n; first += perChunk, k++) {
      const count = Math.min(perChunk, n - first);
      let bytes;
      if (again) bytes = kept[k][2];
      else {
        const [at, len] = kiln.elementBytes(t.index, first, count);
        bytes = await source.read(at, len);
        io.bytesRead += bytes.length; io.requests += 1;
      }
      if (cancelled.has(job)) return { cancelled: true, io: memory() };
      const a = decode(f, t, bytes, first, count);
      for (let i = 0; i < a.length; i++) {
        const x = Number(a[i]);
        if (x === x && x !== Infinity && x !== -Infinity) bins[span > 0 ? Math.min(63, Math.floor(((x - min) / span) * 64)) : 0]++;
      }
      postMessage({ job, progress: ++step / steps, label: `Histogram: ${Math.min(n, first + count)} of ${n} elements` });
      if (!again) await null;
    }
  }
  // The heatmap's rows come from the kept bytes when the tensor was kept
  // whole, else one read per sampled row.
  let whole = null;
  if (keptBytes <= KEEP && kept.length) {
    whole = new Uint8Array(keptBytes);
    let at = 0;
    for (const [, , b] of kept) { whole.set(b, at); at += b.length; }
  }
  kept.length = 0;
  const rowOf = async (first, count) => {
    if (!whole) return readElements(f, t, first, count);
    const [at, len] = kiln.elementBytes(t.index, first, count);
    return decode(f, t, whole.subarray(at - t.byteOffset, at - t.byteOffset + len), first, count);
  };
  let heat = null;
  if (t.shape.length === 2 && n > 1) {
    const [rows, cols] = t.shape;
    const H = Math.min(rows, 256), W = Math.min(cols, 256);
    const cells = new Float64Array(W * H);
    for (let y = 0; y < H; y++) {
      const r = Math.floor((y * rows) / H);
      const row = await rowOf(r * cols, cols);
      for (let x = 0; x < W; x++) cells[y * W + x] = Number(row[Math.floor((x * cols) / W)]);
      if (cancelled.has(job)) return { cancelled: true, io: memory() };
    }
    heat = { W, H, cells };
  }
  return {
    min, max, mean: finite ? sum / finite : NaN, nan, inf, finite, bins, heat,
    ms: performance.now() - t0, bytes: io.bytesRead - before, io: memory(),
  };
}

onmessage = async ({ data }) => {
  const { id, op } = data;
  if (op === 'cancel') { cancelled.add(data.job); return; }
  let reply;
  try {
    if (op === 'open') reply = await open(data);
    else if (op === 'first') reply = await firstValues(data);
    else if (op === 'stats') reply = await stats(data);
    else if (op === 'compare') reply = await compareTensors(data, { files, io, cancelled, memory });
    else if (op === 'close') { for (const f of files.splice(data.from)) f?.kiln.free(); reply = { io: memory() }; }
  } catch (e) { reply = { error: errorOf(e), io: memory() }; }
  const { transfer = [], ...rest } = reply;
  postMessage({ id, ...rest }, transfer);
};
postMessage({ ready: true });

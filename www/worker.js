// The inspector's reader, in a Web Worker: every read of a file happens
// here, asynchronously, through source.js (a File's slice(), or HTTP
// Range requests for a URL). The inspector module's openFile opens any
// file (Kiln, safetensors, GGUF) from the ranges it names, in flight
// together; FileSet joins a safetensors shard set or a GGUF split set
// under kiln-convert's rules. A tensor's values, statistics (stats.js)
// and comparisons (diff.js) read only that tensor's bytes. Every job
// (an open, statistics, a comparison) has an AbortSignal: a cancel stops
// its requests.
//
// Memory: wasm memory holds each open file's model (its heads, at most
// the module's 64 MiB scratch while a Kiln file is checked); a URL
// source keeps its first read (2 MiB); statistics hold a sample of
// 4 MiB, or read a tensor 4 MiB at a time, keeping at most 64 MiB of it.
//
// Two models can be open: `a` (the page's) and `b` (what it is compared
// with). The page talks to this worker through rpc.js.
import init, { openFile, FileSet, setPlace, safetensorsIndexFiles, firstRead, readsAfterFirst, schemaHash } from './inspect/kiln_inspect.js';
import { tensorRows } from './inspect/rows.js';
import { fileSource, urlSource } from './source.js';
import { isIndexName, setOrder } from './set.js';
import { firstValues, tensorStats } from './stats.js';
import { compareTensors } from './diff.js';

const wasm = await init();
/** The open models, by side. */
const models = { a: null, b: null };
/** The running jobs' AbortControllers, by job number. */
const jobs = new Map();
/** What the sources read since model A was opened. */
const io = { bytes: 0, requests: 0 };

const memory = () => ({ bytesRead: io.bytes, requests: io.requests, wasmMemory: wasm.memory.buffer.byteLength });

function errorOf(e) {
  return { code: e?.code ?? 'Error', message: e?.message ?? String(e), offset: e?.offset, fault: e?.fault };
}

/** The bytes around `offset` of a source, for the error's hex view (320 at most). */
async function around(source, offset) {
  const at = offset === undefined ? 0 : Math.min(offset, Math.max(source.length - 1, 0));
  // Arithmetic, not `& ~15`: a bitwise operator cuts an offset past 2 GiB to 32 bits.
  const start = Math.max(0, at - (at % 16) - 128);
  const len = Math.min(source.length - start, 320);
  return { start, bytes: len > 0 ? await source.read(start, len) : new Uint8Array(0) };
}

/** A model the page shows: its tensors, and where each is read. */
class Model {
  /** `columns` (a file's tensorColumns()) or `tensorsJson` (several Kiln files joined). */
  constructor({ main = null, parts = [], sources, columns = null, tensorsJson = null, header, directories, place = null, duplicates = [] }) {
    Object.assign(this, { main, parts, sources, header, directories, place, duplicates });
    this.columns = columns;
    this.json = tensorsJson;
    this.list = null;
    this.meta = null;
  }

  /** What the page makes its rows of: `{ tensorColumns }` or `{ tensorsJson }`, and the buffers to transfer (copies: this model keeps its own). */
  forPage() {
    if (this.columns) {
      const [text, nums] = this.columns;
      const copy = nums.slice();
      return { tensorColumns: [text, copy], transfer: [copy.buffer] };
    }
    const json = this.json.slice();
    return { tensorsJson: json, transfer: [json.buffer] };
  }

  /** Tensor `index` (its number in the module, not its place in the listing), made when first needed. */
  tensor(index) {
    if (!this.list) {
      this.list = [];
      const rows = this.columns ? tensorRows(...this.columns) : JSON.parse(new TextDecoder().decode(this.json));
      for (const t of rows) this.list[t.index] = t;
      this.json = null;
      this.columns = null;
    }
    return this.list[index];
  }

  /** Where tensor `index` is read: its file's KilnFile, its index there, its file's source. */
  reader(index) {
    const t = this.tensor(index);
    if (this.main) return { kiln: this.main, index, source: this.sources.get(t.file ?? this.header.file) ?? this.sources.values().next().value };
    const part = this.parts[t.part];
    return { kiln: part.kiln, index: t.local, source: part.source };
  }

  free() {
    this.main?.free();
    for (const p of this.parts) p.kiln?.free();
  }
}

/**
 * Opens a file, reading it as the options say; a framed message whose
 * hash is no type the module knows is opened again with the first of
 * `types` (the page's known type texts) whose hash it is.
 */
async function openOne(source, { type, framed, types }, signal) {
  const options = { name: source.name, type: type || undefined, framed, signal };
  try {
    return await openFile(source.length, source.read, options);
  } catch (e) {
    if (e.code !== 'SCHEMA' || !e.found || type) throw e;
    const found = BigInt(e.found);
    const known = types.find((t) => { try { return schemaHash(t) === found; } catch { return false; } });
    if (!known) throw e;
    return openFile(source.length, source.read, { ...options, type: known });
  }
}

/** Several Kiln files: no rule joins them, so their tensors are listed one file after another. */
function concatenated(kilns, sources, title) {
  const tensors = [], directories = [], seen = new Map(), duplicates = [];
  kilns.forEach((kiln, part) => {
    const name = sources[part].name;
    const base = tensors.length, dirBase = directories.length;
    for (const t of kiln.tensors()) {
      const key = t.path ? `${t.path} \u203a ${t.name ?? `#${t.index_in_directory}`}` : t.name ?? `#${t.index_in_directory}`;
      if (seen.has(key)) duplicates.push({ key, files: [seen.get(key), name] });
      else seen.set(key, name);
      const shift = (i) => (i === null ? null : base + i);
      const quant = t.quant && { ...t.quant, scales: shift(t.quant.scales), outer: shift(t.quant.outer) };
      tensors.push({ ...t, index: base + t.index, file: name, directory: dirBase + t.directory, quant, part, local: t.index });
    }
    for (const d of kiln.directories()) directories.push({ ...d, file: name });
  });
  const headers = kilns.map((k) => k.header);
  const header = {
    file: title, format: 'kiln', bytes: headers.reduce((s, h) => s + h.bytes, 0),
    files: headers.map((h) => ({ name: h.file, bytes: h.bytes })),
    kiln: headers.every((h) => h.kiln.type === headers[0].kiln.type) ? headers[0].kiln : { ...headers[0].kiln, type: [...new Set(headers.map((h) => h.kiln.type))].join(' | ') },
    gguf: null,
  };
  return new Model({
    parts: kilns.map((kiln, i) => ({ kiln, source: sources[i] })), sources: new Map(sources.map((s) => [s.name, s])),
    tensorsJson: new TextEncoder().encode(JSON.stringify(tensors)), header, directories, duplicates,
  });
}

function close(side) {
  models[side]?.free();
  models[side] = null;
}

/**
 * The `open` op: `files` ([{ blob } or { url, name }]) as model `side`:
 * one file, or several in set order (a safetensors index among them by
 * its name). Replies with the model's facts, or `{ error, hex, length,
 * name }` for the first file that failed, or `{ cancelled }`.
 */
async function open({ side, files, type, framed, types = [] }, signal) {
  close(side);
  if (side === 'a') { close('b'); io.bytes = 0; io.requests = 0; }
  const t0 = performance.now();
  const index = files.find((f) => isIndexName(f.name));
  const list = setOrder(files.filter((f) => !isIndexName(f.name)));
  const indexBytes = index && new Uint8Array(await index.blob.arrayBuffer());
  if (index && !list.length) {
    try {
      const names = safetensorsIndexFiles(indexBytes);
      return { error: { code: 'NoShards', message: `${index.name} is the index of ${names.length} shard${names.length === 1 ? '' : 's'}: pick ${names.join(', ')} with it.` }, name: index.name };
    } catch (e) { return { error: errorOf(e), name: index.name }; }
  }
  const sources = [];
  for (const f of list) {
    try {
      sources.push(f.blob ? fileSource(f.blob, { name: f.name, reads: io }) : await urlSource(f.url, { signal, name: f.name, first: firstRead(), reads: io, after: readsAfterFirst }));
    } catch (e) {
      return e.code === 'Aborted' ? { cancelled: true } : { error: errorOf(e), name: f.name };
    }
  }
  // Every file's opener runs at once: their reads are in flight together.
  const opened = await Promise.allSettled(sources.map((s) => openOne(s, { type, framed, types }, signal)));
  const failed = opened.findIndex((o) => o.status === 'rejected');
  if (failed >= 0) {
    for (const o of opened) if (o.status === 'fulfilled') o.value.free();
    const e = opened[failed].reason;
    if (e?.code === 'Aborted' || signal.aborted) return { cancelled: true };
    const source = sources[failed];
    let hex = null;
    try { hex = await around(source, e.offset); } catch { /* the source failed: no bytes to show */ }
    return { error: errorOf(e), hex, length: source.length, name: source.name };
  }
  const kilns = opened.map((o) => o.value);
  const checkMs = performance.now() - t0;
  const t1 = performance.now();
  let model;
  if (kilns.length === 1 && !index) {
    const kiln = kilns[0];
    const header = kiln.header;
    model = new Model({
      main: kiln, sources: new Map([[sources[0].name, sources[0]]]), columns: kiln.tensorColumns(), header,
      directories: kiln.directories(), place: header.format === 'kiln' ? null : setPlace(kiln, sources[0].name),
    });
  } else if (!index && kilns.every((k) => k.header.format === 'kiln')) {
    model = concatenated(kilns, sources, `${sources[0].name}: ${kilns.length} files`);
  } else {
    const set = new FileSet(index?.name ?? sources[0].name);
    for (const k of kilns) set.add(k);
    for (const k of kilns) k.free();
    let whole;
    try { whole = set.finish(indexBytes); } catch (e) { return { error: { ...errorOf(e), set: true }, name: index?.name ?? sources[0].name }; }
    model = new Model({
      main: whole, sources: new Map(sources.map((s) => [s.name, s])), columns: whole.tensorColumns(),
      header: whole.header, directories: whole.directories(),
    });
  }
  models[side] = model;
  const tensors = model.forPage();
  const factsMs = performance.now() - t1;
  return {
    header: model.header, directories: model.directories, place: model.place, duplicates: model.duplicates,
    title: index ? `${index.name}: ${list.length} shards` : list.length > 1 ? `${list[0].name}: ${list.length} files` : list[0].name,
    ...tensors, checkMs, factsMs, postedAt: performance.timeOrigin + performance.now(), io: memory(),
  };
}

// ---------------------------------------------------------------- metadata

const PREVIEW = 240;

/** A metadata value as text: a string as itself, a 64-bit integer in decimal, a list as its items. */
function valueText(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === 'string' ? JSON.stringify(v) : valueText(v))).join(', ')}]`;
  if (value && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The model's metadata, from the module's JSON form: each key, type and a preview of its value. */
function metadataList(model) {
  if (!model.meta) {
    const kilns = model.main ? [[model.main, null]] : model.parts.map((p) => [p.kiln, p.source.name]);
    const entries = [];
    let omitted = 0;
    for (const [kiln, file] of kilns) {
      const meta = JSON.parse(kiln.metadataJson());
      omitted += meta.omitted_values;
      for (const m of meta.metadata) entries.push({ ...m, key: file && kilns.length > 1 ? `${file} \u203a ${m.key}` : m.key });
    }
    model.meta = { entries, omitted };
  }
  const { entries, omitted } = model.meta;
  return {
    omitted,
    metadata: entries.map(({ key, type, value }) => {
      const text = valueText(value);
      const items = Array.isArray(value) ? value.length : null;
      return { key, type, preview: text.length > PREVIEW ? text.slice(0, PREVIEW) : text, chars: text.length, items };
    }),
  };
}

// ---------------------------------------------------------------- the ops

const ops = {
  open: (m, signal) => open(m, signal),
  metadata: ({ side }) => metadataList(models[side]),
  metaValue: ({ side, i }) => ({ text: valueText(models[side].meta.entries[i].value) }),
  first: ({ side, index, count }, signal) => {
    const model = models[side];
    return firstValues(model.reader(index), model.tensor(index), count, signal);
  },
  stats: ({ side, index, all, job }, signal) => {
    const model = models[side];
    const progress = (p, label) => postMessage({ job, progress: p, label });
    return tensorStats(model.reader(index), model.tensor(index), { all, signal, progress });
  },
  compare: ({ pairs, job }, signal) => {
    const before = io.bytes;
    const progress = (p, label) => postMessage({ job, progress: p, label });
    return compareTensors(pairs, models.a, models.b, { signal, progress }).then((r) => ({ ...r, bytes: io.bytes - before }));
  },
  close: ({ side }) => { close(side); return {}; },
};

onmessage = async ({ data }) => {
  const { id, op, job } = data;
  if (op === 'cancel') { jobs.get(job)?.abort(); return; }
  const controller = new AbortController();
  if (job !== undefined) jobs.set(job, controller);
  let reply;
  try {
    reply = await ops[op](data, controller.signal);
  } catch (e) {
    reply = e?.code === 'Aborted' || controller.signal.aborted ? { cancelled: true } : { error: errorOf(e) };
  } finally {
    if (job !== undefined) jobs.delete(job);
  }
  const { transfer = [], ...rest } = reply ?? {};
  postMessage({ id, ...rest, io: memory() }, transfer);
};
postMessage({ ready: true });

// Several files as one model: each file is opened by the worker in its own
// slot (by ranges, as a single file is), and the page merges their tables
// into one, each tensor labelled with its file. `index` is the tensor's
// place in the merged table; `file` (the worker's slot) and `local` (its
// index in that file) are what the worker is asked for.

import { checkGgufSplit, checkSafetensorsIndex, safetensorsIndexFiles } from './inspect/kiln_inspect.js';

const isIndex = (f) => f.name.endsWith('.index.json');

/** File names in set order: shard numbers in the names sort as numbers. */
export function setOrder(list) {
  const key = (n) => n.replace(/\d+/g, (d) => d.padStart(12, '0'));
  return [...list].sort((a, b) => (key(a.name) < key(b.name) ? -1 : key(a.name) > key(b.name) ? 1 : 0));
}

/** A tensor's key across files and models: its directory path and name (or index). */
export function tensorKey(t) {
  return `${t.path ? `${t.path} \u203a ` : ''}${t.name ?? `#${t.indexInDirectory}`}`;
}

/**
 * Opens `list` (Files or Blobs with names) in slots `firstSlot`, ... and
 * merges them; `typeOf(blob)` gives each file's type text and framing.
 * On the first file that fails: `{ error, hex, length, name }`.
 */
export async function openSet(all, { call, typeOf, firstSlot = 0 }) {
  const t0 = performance.now();
  const index = all.find(isIndex);
  const list = all.filter((f) => !isIndex(f));
  if (index && !list.length) return { error: await indexAlone(index), name: index.name };
  const opened = [];
  for (const [i, file] of list.entries()) {
    const { type, framed, format } = await typeOf(file);
    const r = await call({ op: 'open', blob: file, type, framed, format, slot: firstSlot + i });
    if (r.error) return { ...r, name: file.name };
    opened.push({ name: file.name, slot: firstSlot + i, ...r });
  }
  // Files of an earlier, larger set in the slots after these are closed.
  await call({ op: 'close', from: firstSlot + list.length });
  const error = await checkSet(index, opened);
  if (error) return { error: { ...error, set: true }, name: index?.name ?? opened[0].name };
  const title = index ? `${index.name}: ${list.length} shards` : `${list.length} files`;
  return { ...mergeSet(opened), title, checkMs: performance.now() - t0, io: opened.at(-1)?.io };
}

/**
 * Short labels for a set's files: the names without the prefix and suffix
 * they all share (cut at a '-', '_' or '.'), so "model-00002-of-00003.gguf"
 * is "00002"; the whole name where nothing is left.
 */
export function fileLabels(names) {
  if (names.length < 2) return names;
  const common = (xs) => { let n = 0; while (xs.every((x) => n < x.length && x[n] === xs[0][n])) n++; return n; };
  const cut = (x, n) => { while (n > 0 && !/[-_.]/.test(x[n - 1])) n--; return n; };
  const p = cut(names[0], common(names));
  const rev = names.map((x) => [...x].reverse().join(''));
  const q = cut(rev[0], common(rev));
  return names.map((x) => x.slice(p, x.length - q) || x);
}

function errorOf(e) {
  return { code: e.code ?? 'Error', message: e.message, offset: e.offset, fault: e.fault };
}

/** The set rules of kiln-convert (in the inspector's module) over the opened heads: an error, or null. */
async function checkSet(index, opened) {
  const names = (f) => f.tensors.map((t) => t.name);
  try {
    if (index) {
      checkSafetensorsIndex(new Uint8Array(await index.arrayBuffer()), opened.map((f) => ({ file: f.name, tensors: names(f) })));
    } else if (opened.length > 1 && opened.every((f) => f.header.format === 'gguf')) {
      checkGgufSplit(opened.map((f) => ({ file: f.name, metadata: f.metadata ?? [], tensors: names(f) })));
    }
  } catch (e) { return errorOf(e); }
  return null;
}

/** An index picked without its shards: which files it names. */
async function indexAlone(index) {
  try {
    const files = safetensorsIndexFiles(new Uint8Array(await index.arrayBuffer()));
    return { code: 'NoShards', message: `${index.name} is the index of ${files.length} shard${files.length === 1 ? '' : 's'}: pick ${files.join(', ')} with it.` };
  } catch (e) { return errorOf(e); }
}

/** One model from opened files `[{ name, slot, header, tensors, directories, value }]`. */
export function mergeSet(opened) {
  const tensors = [], directories = [], seen = new Map(), duplicates = [];
  const labels = fileLabels(opened.map((f) => f.name));
  for (const [i, f] of opened.entries()) {
    const base = tensors.length, dirBase = directories.length;
    for (const t of f.tensors) {
      const key = tensorKey(t);
      if (seen.has(key)) duplicates.push({ key, files: [seen.get(key), f.name] });
      else seen.set(key, f.name);
      tensors.push({
        ...t, index: base + t.index, local: t.index, file: f.slot, fileName: f.name, fileLabel: labels[i], directory: dirBase + t.directory,
        scale: t.scale === null ? null : base + t.scale, outer: t.outer === null ? null : base + t.outer,
      });
    }
    for (const d of f.directories) directories.push({ ...d, firstTensor: base + d.firstTensor, fileName: f.name, fileLabel: labels[i] });
  }
  const sum = (k) => opened.reduce((a, f) => a + f.header[k], 0);
  const types = [...new Set(opened.map((f) => f.header.typeText))];
  const formats = [...new Set(opened.map((f) => f.header.format ?? 'kiln'))];
  const header = {
    format: formats.length === 1 ? formats[0] : 'mixed',
    byteLength: sum('byteLength'), typeText: types.join(' | '), framed: opened.every((f) => f.header.framed),
    schemaHash: opened[0]?.header.schemaHash ?? 0n, tensorCount: sum('tensorCount'), directoryCount: sum('directoryCount'),
    readBytes: sum('readBytes'), readRequests: sum('readRequests'), skippedBytes: sum('skippedBytes'),
    scratchBytes: Math.max(...opened.map((f) => f.header.scratchBytes)), inMemory: false,
  };
  return {
    header, tensors, directories, value: null, duplicates,
    // Each file's metadata pairs, the file's label before the key.
    metadata: opened.flatMap((f, i) => (f.metadata ?? []).map((p) => ({ ...p, key: `${labels[i]} \u203a ${p.key}` }))),
    files: opened.map((f, i) => ({ name: f.name, label: labels[i], slot: f.slot, byteLength: f.header.byteLength, tensorCount: f.header.tensorCount })),
  };
}

// Several files as one model, the parts that are no set rule: the order
// the files are given to the inspector's FileSet in, which file is an
// index, and the short labels of the File column. Whether the files make
// one model is the module's to say (FileSet.finish), never this file's.

/** Whether a file (by its name) is a safetensors index, not a model file. */
export const isIndexName = (name) => name.endsWith('.index.json');

/** Files in set order, by name: shard numbers in the names sort as numbers. */
export function setOrder(list) {
  const key = (n) => n.replace(/\d+/g, (d) => d.padStart(12, '0'));
  return [...list].sort((a, b) => (key(a.name) < key(b.name) ? -1 : key(a.name) > key(b.name) ? 1 : 0));
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

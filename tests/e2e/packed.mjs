// The packed npm module from a plain node script: `npm pack` of www/pkg/
// (scripts/stages/www.sh) installed into a scratch project, imported by
// its package name, initialised with initSync, and used on a sample file
// read by ranges. Run as `node packed.mjs DIR` with the project in DIR.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = process.argv[2];
const require = createRequire(path.join(dir, 'package.json'));
const entry = require.resolve('kiln-wasm');
const { initSync, KilnFile } = await import(entry);
const wasmFile = require.resolve('kiln-wasm/kiln_wasm_bg.wasm');
initSync({ module: fs.readFileSync(wasmFile) });

const meta = JSON.parse(fs.readFileSync(require.resolve('kiln-wasm/package.json'), 'utf8'));
assert.equal(meta.name, 'kiln-wasm');
assert.ok(fs.existsSync(path.join(path.dirname(entry), meta.types)), 'the types are packed');

const sample = new URL('../../www/samples/model.kiln', import.meta.url);
const fd = fs.openSync(sample, 'r');
try {
  const size = fs.fstatSync(fd).size;
  // An async read, as a browser's Blob.slice().arrayBuffer() or fetch is.
  const read = async (offset, length) => {
    const out = new Uint8Array(length);
    fs.readSync(fd, out, 0, length, offset);
    return out;
  };
  const kiln = await KilnFile.openReader(size, read, {});
  const tensors = kiln.tensors();
  assert.equal(tensors.length, 19);
  assert.equal(kiln.header.kiln.type, 'tensors');
  const t = tensors.find((x) => x.name === 'embed.weight');
  const [at, len] = kiln.elementBytes(t.index, 0, 4);
  const first = Array.from(kiln.widenBytes(t.index, await read(at, len), 0, 4));
  assert.equal(first.length, 4);
  console.log(`packed kiln-wasm ${meta.version}: ${tensors.length} tensors, ${kiln.reads.bytes} of ${size} bytes read; embed.weight starts ${first.map((x) => x.toFixed(3)).join(', ')}`);
} finally {
  fs.closeSync(fd);
}

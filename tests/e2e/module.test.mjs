// The ES module package www/pkg/ from plain JavaScript (node's test
// runner): every golden case's verdict and code, the zero-copy proof,
// views and display conversions of every dtype sample, errors as JS
// Error objects; and what only the inspector's module (www/inspect/)
// adds: the message as plain JS values. Built by
// `bash scripts/www.sh --build-only`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import * as core from '../../www/pkg/kiln_wasm.js';
import * as inspector from '../../www/inspect/kiln_inspect.js';

const { initSync, KilnFile, peekFrame, schemaHash } = core;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasm = initSync({ module: fs.readFileSync(path.join(root, 'www/pkg/kiln_wasm_bg.wasm')) });
inspector.initSync({ module: fs.readFileSync(path.join(root, 'www/inspect/kiln_inspect_bg.wasm')) });

const unhex = (h) => Uint8Array.from(h.match(/../g) ?? [], (b) => parseInt(b, 16));
const cases = JSON.parse(fs.readFileSync(path.join(root, 'spec/kiln-v2-cases.json'), 'utf8'));
const samples = JSON.parse(fs.readFileSync(path.join(root, 'www/samples/samples.json'), 'utf8'));
const sample = (name) => {
  const s = samples.find((x) => x.file === name);
  const b = fs.readFileSync(path.join(root, 'www/samples', name));
  // A fresh ArrayBuffer, as File.arrayBuffer() gives one.
  const bytes = new Uint8Array(b.byteLength);
  bytes.set(b);
  return { bytes, file: KilnFile.open(bytes, s.type, s.framed), meta: s };
};

test('every golden case: verdict and code from JS', () => {
  assert.equal(cases.length, 256);
  let accepted = 0;
  for (const c of cases) {
    const bytes = unhex(c.hex);
    let got = 'accept';
    try {
      const f = KilnFile.open(bytes, c.type, c.framed, c.cap);
      f.free();
      accepted++;
    } catch (e) {
      assert.ok(e instanceof Error, c.name);
      assert.equal(e.name, 'KilnError');
      assert.equal(typeof e.offset, 'number', `${c.name}: offset`);
      got = e.code;
    }
    assert.equal(got, c.expect, c.name);
  }
  assert.ok(accepted > 50);
});

test('zero copy: the view is over the buffer holding the file, and sees writes', () => {
  const { bytes, file } = sample('model.kiln');
  const t = file.tensors().find((t) => t.name === 'embed.weight');
  const v = file.view(t.index);
  assert.equal(v.copied, false);
  assert.ok(v.array instanceof Float32Array);
  assert.equal(v.array.buffer, bytes.buffer);
  assert.equal(v.array.byteOffset, t.byteOffset);
  assert.equal(v.array.length, t.elements);
  // Write the file's bytes: the view sees it.
  new DataView(bytes.buffer).setFloat32(t.byteOffset + 4, 1234.5, true);
  assert.equal(v.array[1], 1234.5);
  // The check read the heads and the few payload bytes its rules read.
  assert.ok(file.header.readBytes + file.header.skippedBytes === bytes.length);
  assert.ok(file.header.inMemory);
});

test('converted models: every whole-byte payload is viewed in place, never copied', () => {
  const converted = samples.filter((s) => s.converted);
  assert.equal(converted.length, 2);
  for (const s of converted) {
    const { bytes, file } = sample(s.file);
    const tensors = file.tensors();
    assert.ok(tensors.length >= 3, s.file);
    let viewed = 0;
    for (const t of tensors) {
      assert.equal(t.byteOffset % 64, 0, `${s.file} ${t.name}: offset ${t.byteOffset}`);
      const v = file.view(t.index);
      assert.equal(v.copied, false, `${s.file} ${t.name}`);
      assert.equal(v.array.buffer, bytes.buffer, `${s.file} ${t.name}`);
      viewed++;
    }
    assert.equal(viewed, tensors.length);
  }
});

test('openReader: a file read by ranges with fs.readSync, payloads never read', () => {
  const file = path.join(root, 'www/samples/model.kiln');
  const fd = fs.openSync(file, 'r');
  const size = fs.fstatSync(fd).size;
  let read = 0, reads = 0;
  const readRange = (offset, length) => {
    const out = new Uint8Array(length);
    assert.equal(fs.readSync(fd, out, 0, length, offset), length);
    read += length; reads++;
    return out;
  };
  try {
    const kiln = KilnFile.openReader(size, readRange, 'tensors', false);
    const h = kiln.header;
    assert.equal(h.inMemory, false);
    assert.equal(h.readBytes, read);
    assert.equal(h.readRequests, reads);
    const payloads = kiln.tensors().reduce((a, t) => a + t.byteLength, 0);
    assert.ok(read < size - payloads / 2, `read ${read} of ${size}`);
    // Values: the caller reads the bytes elementBytes names.
    const t = kiln.tensors().find((x) => x.name === 'layers.0.norm.weight');
    const [at, len] = kiln.elementBytes(t.index, 0, 4);
    const values = Array.from(kiln.widenBytes(t.index, readRange(at, len), 0, 4));
    assert.deepEqual(values, samples.find((s) => s.file === 'model.kiln').values['layers.0.norm.weight'].slice(0, 4));
    assert.throws(() => kiln.view(t.index), (e) => e.code === 'NotInMemory');
    // A read function that fails: an Io refusal, never a partial table.
    assert.throws(() => KilnFile.openReader(size, () => new Uint8Array(1), 'tensors', false), (e) => e.code === 'Io');
    assert.throws(() => KilnFile.openReader(size, () => { throw new Error('gone'); }, 'tensors', false), (e) => e.code === 'Io');
  } finally {
    fs.closeSync(fd);
  }
});

test('every dtype: view type and values', () => {
  const { file } = sample('model.kiln');
  const want = {
    f64: 'Float64Array', f32: 'Float32Array', bf16: 'Uint16Array', i8: 'Int8Array',
    u8: 'Uint8Array', i16: 'Int16Array', u16: 'Uint16Array', i32: 'Int32Array',
    u32: 'Uint32Array', i64: 'BigInt64Array', u64: 'BigUint64Array', bool: 'Uint8Array',
    f8e4m3: 'Uint8Array', f8e5m2: 'Uint8Array', i4: 'Uint8Array', u4: 'Uint8Array',
    e2m1: 'Uint8Array', e8m0: 'Uint8Array',
    f16: typeof Float16Array === 'function' ? 'Float16Array' : 'Uint16Array',
  };
  const seen = new Set();
  for (const t of file.tensors()) {
    const v = file.view(t.index);
    assert.equal(v.array.constructor.name, want[t.dtype], t.name);
    assert.equal(v.arrayType, want[t.dtype]);
    assert.equal(v.array.byteLength, t.byteLength, t.name);
    seen.add(t.dtype);
    // Display values: the sample's tensors hold known values (samples.json).
    const expect = file.header && samples.find((s) => s.file === 'model.kiln').values[t.name];
    if (expect) {
      const got = Array.from(file.widen(t.index, 0, expect.length));
      assert.deepEqual(got, expect, t.name);
    }
  }
  assert.equal(seen.size, 19);
  const i64 = file.tensors().find((t) => t.dtype === 'i64');
  assert.equal(typeof file.view(i64.index).array[0], 'bigint');
});

test('a misaligned payload gives a copy that says so', () => {
  const { bytes, file } = sample('record.kiln');
  const t = file.tensors().find((t) => !t.aligned);
  assert.ok(t, 'record.kiln has a misaligned payload');
  const v = file.view(t.index);
  assert.equal(v.copied, true);
  assert.match(v.reason, /misaligned/);
  assert.notEqual(v.array.buffer, bytes.buffer);
  assert.deepEqual(
    new Uint8Array(v.array.buffer),
    bytes.subarray(t.byteOffset, t.byteOffset + t.byteLength),
  );
});

test('the core module exports what another page embeds; the tree and the comparison are the inspector\'s', () => {
  for (const name of ['KilnFile', 'peekFrame', 'schemaHash']) {
    assert.equal(typeof core[name], 'function', `core: ${name}`);
    assert.equal(typeof inspector[name], 'function', `inspector: ${name}`);
  }
  for (const m of ['open', 'openReader', 'openDirectory']) assert.equal(typeof KilnFile[m], 'function', m);
  for (const m of ['tensors', 'directories', 'view', 'widen', 'elementBytes', 'widenBytes']) {
    assert.equal(typeof KilnFile.prototype[m], 'function', m);
  }
  assert.equal(core.TensorDiff, undefined);
  assert.equal(KilnFile.prototype.value, undefined);
  assert.equal(KilnFile.prototype.metadata, undefined);
  assert.equal(typeof inspector.TensorDiff, 'function');
  assert.equal(typeof inspector.KilnFile.prototype.value, 'function');
  assert.equal(typeof inspector.KilnFile.prototype.metadata, 'function');
});

test('the TypeScript types follow the split: the core declares what it exports, the inspector the rest', () => {
  const dts = (f) => fs.readFileSync(path.join(root, f), 'utf8');
  const core = dts('www/pkg/kiln_wasm.d.ts');
  const insp = dts('www/inspect/kiln_inspect.d.ts');
  for (const name of ['class KilnFile', 'interface TensorInfo', 'interface TensorView', 'interface KilnError', 'openReader(', 'widenBytes(']) {
    assert.ok(core.includes(name), `core .d.ts: ${name}`);
    assert.ok(insp.includes(name), `inspector .d.ts: ${name}`);
  }
  for (const name of ['class TensorDiff', 'type KilnValue', 'value(): KilnValue', 'metadata(): MetadataPair[]']) {
    assert.ok(!core.includes(name), `core .d.ts has no ${name}`);
    assert.ok(insp.includes(name), `inspector .d.ts: ${name}`);
  }
});

test('message values (inspector module): ids as BigInt, strings, lists, dicts, tensors paths', () => {
  const { bytes, meta } = sample('record.kiln');
  const file = inspector.KilnFile.open(bytes, meta.type, meta.framed);
  const v = file.value();
  assert.equal(typeof v.id, 'bigint');
  assert.equal(v.id, BigInt(meta.id));
  assert.equal(typeof v.name, 'string');
  assert.ok(Array.isArray(v.labels));
  const paths = file.directories().map((d) => d.path);
  assert.deepEqual(paths, meta.paths);
  assert.equal(v.batch.$tensors, paths.indexOf('batch'));
});

test('peekFrame says whether bytes are framed and with which hash', () => {
  for (const s of samples) {
    const bytes = new Uint8Array(fs.readFileSync(path.join(root, 'www/samples', s.file)));
    const frame = peekFrame(bytes);
    if (!s.framed) continue;
    assert.ok(frame, s.file);
    assert.equal(frame.wellFormed, true, s.file);
    if (s.file !== 'invalid.kiln') assert.equal(frame.hash, schemaHash(s.type), s.file);
  }
  assert.equal(peekFrame(new TextEncoder().encode('KLN0')), null); // fewer than 16 bytes
  assert.equal(peekFrame(new TextEncoder().encode('KLNT0123456789abcdef')), null);
  const odd = new Uint8Array(16);
  odd.set(new TextEncoder().encode('KLN0'));
  odd[5] = 1; // nonzero flags
  assert.equal(peekFrame(odd).wellFormed, false);
  // The one type-node cap: a type kiln check takes (over 1,024 nodes) opens here.
  const wide = `struct{${Array.from({ length: 1500 }, (_, i) => `f${i}:u8,`).join('')}}`;
  assert.equal(typeof schemaHash(wide), 'bigint');
  assert.throws(() => schemaHash('struct{a:}'), (e) => e.code === 'BadTypeText');
});

test('quantized tensors link to their scale and outer tensors', () => {
  const { file } = sample('mxfp4.kiln');
  const ts = file.tensors();
  const w = ts.find((t) => t.quant === 'scales');
  assert.equal(ts[w.scale].name, w.scaleName);
  assert.equal(ts[w.scale].dtype, 'e8m0');
  const o = ts.find((t) => t.quant === 'scales+outer');
  assert.equal(ts[o.outer].dtype, 'f32');
  assert.equal(ts[o.outer].name, o.outerName);
  const q = sample('q4k.kiln').file.tensors()[0];
  assert.equal(q.layout, 'Q4_K');
  assert.ok(q.blockSize > 0);
  assert.match(q.dtype, /^opaque\(/);
});

test('errors are JS Error objects with code and absolute offset', () => {
  const { meta } = samples.find((s) => s.file === 'invalid.kiln') ? { meta: samples.find((s) => s.file === 'invalid.kiln') } : {};
  const b = new Uint8Array(fs.readFileSync(path.join(root, 'www/samples/invalid.kiln')));
  assert.throws(() => KilnFile.open(b, meta.type, meta.framed), (e) => {
    assert.equal(e.code, meta.expect);
    assert.equal(e.offset, meta.offset);
    assert.match(e.message, new RegExp(`^${meta.expect}: `));
    return true;
  });
  assert.throws(() => KilnFile.open(b, 'struct{a:}', false), (e) => e.code === 'BadTypeText');
  const { file } = sample('model.kiln');
  assert.throws(() => file.view(100000), (e) => e.code === 'NoSuchTensor');
  const q = sample('q4k.kiln').file;
  assert.throws(() => q.widen(0, 0, 4), (e) => {
    assert.equal(e.code, 'WrongElementType');
    // The tensor's dtype, as its TensorInfo names it; a widen asks for no one type.
    assert.equal(e.dtype, q.tensors()[0].dtype);
    assert.match(e.dtype, /^opaque\(\d+\)$/);
    assert.equal(e.requested, undefined);
    return true;
  });
});

test('errors carry their numbers: bytes needed and there, a count and its cap', () => {
  // A list<u8> that claims 100 bytes, with 2 after its count.
  const short = Uint8Array.of(100, 0, 0, 0, 1, 2);
  assert.throws(() => KilnFile.open(short, 'list<u8>', false), (e) => {
    assert.equal(e.code, 'EOF');
    assert.equal(e.needed, 100);
    assert.equal(e.available, 2);
    assert.equal(e.claimed, undefined);
    return true;
  });
  // The same claim over a cap of 16 elements.
  const capped = new Uint8Array(104);
  capped[0] = 100;
  assert.throws(() => KilnFile.open(capped, 'list<u8>', false, 16), (e) => {
    assert.equal(e.code, 'LIMIT');
    assert.equal(e.claimed, 100);
    assert.equal(e.cap, 16);
    assert.equal(e.needed, undefined);
    return true;
  });
});

test('a view never goes stale: wasm memory growth, and a detached buffer', () => {
  const { bytes, file } = sample('model.kiln');
  const t = file.tensors()[0];
  const v = file.view(t.index).array;
  const before = Array.from(v.subarray(0, 4));
  // Grow wasm memory: a 32 MiB byte run is not a tensor payload, so the
  // check copies it into wasm memory, which must grow for it.
  const memory = wasm.memory.buffer;
  const run = new Uint8Array(4 + (32 << 20));
  new DataView(run.buffer).setUint32(0, 32 << 20, true);
  const grown = KilnFile.open(run, 'list<u8>', false, 64 << 20);
  assert.notEqual(wasm.memory.buffer, memory, 'wasm memory grew');
  assert.equal(memory.byteLength, 0, 'the old wasm buffer is detached');
  assert.equal(grown.header.byteLength, run.byteLength);
  assert.ok(grown.header.scratchBytes >= run.byteLength, 'the run was read into wasm memory');
  // The view is over the file's own buffer: untouched by the growth.
  assert.equal(v.length, t.elements);
  assert.deepEqual(Array.from(v.subarray(0, 4)), before);
  // The caller detaches its own buffer: the module refuses, never returns an empty array.
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
  assert.throws(() => file.view(t.index), (e) => e.code === 'Detached');
  assert.throws(() => file.widen(t.index, 0, 1), (e) => e.code === 'Detached');
});

test('the core module\'s memory: a 10,000-tensor file opened again and again reuses what the last open freed', () => {
  const dir = process.env.KILN_E2E_DIR ?? path.join(root, 'target/e2e-files');
  const file = path.join(dir, 'many.kiln');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-wasm', '--example', 'make_samples', '--', '--many', file], { cwd: root, stdio: 'inherit' });
    assert.equal(r.status, 0, 'writing many.kiln');
  }
  const fd = fs.openSync(file, 'r');
  const size = fs.fstatSync(fd).size;
  const readRange = (offset, length) => {
    const out = new Uint8Array(length);
    assert.equal(fs.readSync(fd, out, 0, length, offset), length);
    return out;
  };
  try {
    // The inspector's module (std's allocator) gives the same table.
    const want = inspector.KilnFile.openReader(size, readRange, 'tensors', false).tensors();
    assert.equal(want.length, 10_000);
    const grown = [];
    for (let round = 0; round < 6; round++) {
      const kiln = KilnFile.openReader(size, readRange, 'tensors', false);
      const got = kiln.tensors();
      assert.deepEqual(got, want, `round ${round}`);
      kiln.free();
      grown.push(wasm.memory.buffer.byteLength);
    }
    console.log(`core module: wasm memory after each open of many.kiln: ${grown.join(", ")} bytes`);
    assert.equal(grown[5], grown[1], `wasm memory after each open: ${grown}`);
  } finally {
    fs.closeSync(fd);
  }
});

// The ES module package www/pkg/ from plain JavaScript (node's test
// runner): every golden case's verdict and code, the zero-copy proof,
// views and display conversions of every dtype sample, errors as JS
// Error objects, a file opened by ranges through an async read; and what
// only the inspector's module (www/inspect/, imported as the ES module
// its package.json says it is) adds: the whole JSON form, openFile for
// every format. Built by `bash scripts/www.sh --build-only`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import * as core from '../../www/pkg/kiln_wasm.js';
import * as inspector from '../../www/inspect/kiln_inspect.js';

const { initSync, KilnFile, peekFrame, schemaHash, firstRead } = core;

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
  return { bytes, file: KilnFile.open(bytes, { type: s.type, framed: s.framed }), meta: s };
};

test('every golden case: verdict and code from JS', () => {
  assert.equal(cases.length, 256);
  let accepted = 0;
  for (const c of cases) {
    const bytes = unhex(c.hex);
    let got = 'accept';
    try {
      const f = KilnFile.open(bytes, { type: c.type, framed: c.framed, cap: c.cap });
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
  assert.equal(v.array.byteOffset, t.offset);
  assert.equal(v.array.length, t.elements);
  // Write the file's bytes: the view sees it.
  new DataView(bytes.buffer).setFloat32(t.offset + 4, 1234.5, true);
  assert.equal(v.array[1], 1234.5);
  // The check read the heads and the few payload bytes its rules read.
  assert.ok(file.reads.skipped > 0 && file.reads.bytes < bytes.length, JSON.stringify(file.reads));
  assert.equal(file.bytes, bytes, 'in memory: the caller\'s own bytes');
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
      assert.equal(t.offset % 64, 0, `${s.file} ${t.name}: offset ${t.offset}`);
      const v = file.view(t.index);
      assert.equal(v.copied, false, `${s.file} ${t.name}`);
      assert.equal(v.array.buffer, bytes.buffer, `${s.file} ${t.name}`);
      viewed++;
    }
    assert.equal(viewed, tensors.length);
  }
});

test('openReader: a file read by ranges through an async read, payloads never read', async () => {
  const file = path.join(root, 'www/samples/model.kiln');
  const fd = fs.openSync(file, 'r');
  const size = fs.fstatSync(fd).size;
  let read = 0, reads = 0;
  const readRange = async (offset, length) => {
    const out = new Uint8Array(length);
    assert.equal(fs.readSync(fd, out, 0, length, offset), length);
    read += length; reads++;
    return out;
  };
  try {
    const kiln = await KilnFile.openReader(size, readRange, {});
    assert.equal(kiln.bytes, undefined, 'not in memory');
    assert.equal(kiln.reads.bytes, read);
    assert.equal(kiln.reads.requests, reads);
    assert.equal(kiln.header.kiln.type, 'tensors', 'a bare directory, from its bytes');
    const payloads = kiln.tensors().reduce((a, t) => a + t.bytes, 0);
    assert.ok(read < size - payloads / 2 || read <= firstRead(), `read ${read} of ${size}`);
    // Values: the caller reads the bytes elementBytes names.
    const t = kiln.tensors().find((x) => x.name === 'layers.0.norm.weight');
    const [at, len] = kiln.elementBytes(t.index, 0, 4);
    const values = Array.from(kiln.widenBytes(t.index, await readRange(at, len), 0, 4));
    assert.deepEqual(values, samples.find((s) => s.file === 'model.kiln').values['layers.0.norm.weight'].slice(0, 4));
    assert.throws(() => kiln.view(t.index), (e) => e.code === 'NotInMemory');
    // A read function that fails: refused, never a partial table.
    await assert.rejects(KilnFile.openReader(size, async () => new Uint8Array(1), {}), (e) => e.name === 'KilnError');
    await assert.rejects(KilnFile.openReader(size, async () => { throw Object.assign(new Error('gone'), { code: 'Io' }); }, {}), (e) => e.code === 'Io');
    // A signal that fires stops the open: no read starts after it.
    const controller = new AbortController();
    let after = 0;
    const stopping = (offset, length) => { controller.abort(); after++; return readRange(offset, length); };
    await assert.rejects(KilnFile.openReader(size, stopping, { signal: controller.signal }), (e) => e.code === 'Aborted');
    assert.equal(after, 1, 'one read, then the open stopped');
  } finally {
    fs.closeSync(fd);
  }
});

test('openFile (the inspector\'s module): every format by ranges, the format from the first read, one read in flight per range known', async () => {
  for (const [name, format] of [['model.kiln', 'kiln'], ['tiny-safetensors.kiln', 'kiln'], ['tiny.safetensors', 'safetensors'], ['tiny.gguf', 'gguf']]) {
    const bytes = new Uint8Array(fs.readFileSync(path.join(root, 'www/samples', name)));
    const asked = [];
    const read = async (offset, length) => { asked.push([offset, length]); return bytes.slice(offset, offset + length); };
    const file = await inspector.openFile(bytes.length, read, { name });
    assert.equal(file.header.format, format, name);
    assert.equal(file.header.file, name);
    assert.deepEqual(asked[0], [0, Math.min(bytes.length, inspector.firstRead())], `${name}: the first read is the module's firstRead()`);
    const json = JSON.parse(file.json());
    assert.deepEqual(json.tensors, file.tensors(), `${name}: json() holds tensors()`);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(file.tensorsJson())), file.tensors());
    for (const key of ['file', 'format', 'bytes', 'files', 'kiln', 'gguf']) assert.deepEqual(json[key], file.header[key], `${name}: header.${key}`);
    assert.ok(Array.isArray(json.metadata));
    file.free();
  }
  // A converted model lists its tensors in its source file's order.
  const order = async (name) => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(root, 'www/samples', name)));
    const f = await inspector.openFile(bytes.length, (o, l) => bytes.slice(o, o + l), { name });
    const names = f.tensors().map((t) => t.name);
    f.free();
    return names;
  };
  assert.deepEqual(await order('tiny-safetensors.kiln'), await order('tiny.safetensors'));
  assert.deepEqual(await order('tiny-gguf.kiln'), await order('tiny.gguf'));
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
    assert.equal(v.array.byteLength, t.bytes, t.name);
    seen.add(t.dtype);
    // Display values: the sample's tensors hold known values (samples.json).
    const expect = samples.find((s) => s.file === 'model.kiln').values[t.name];
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
  const t = file.tensors().find((t) => !t.in_place);
  assert.ok(t, 'record.kiln has a misaligned payload');
  const v = file.view(t.index);
  assert.equal(v.copied, true);
  assert.match(v.reason, /misaligned/);
  assert.notEqual(v.array.buffer, bytes.buffer);
  assert.deepEqual(
    new Uint8Array(v.array.buffer),
    bytes.subarray(t.offset, t.offset + t.bytes),
  );
});

test('the core module exports what another page embeds; the JSON form, openFile, sets and the comparison are the inspector\'s', () => {
  for (const name of ['KilnFile', 'KilnOpener', 'peekFrame', 'schemaHash', 'firstRead']) {
    assert.equal(typeof core[name], 'function', `core: ${name}`);
    assert.equal(typeof inspector[name], 'function', `inspector: ${name}`);
  }
  for (const m of ['open', 'openReader', 'openDirectory']) assert.equal(typeof KilnFile[m], 'function', m);
  for (const m of ['tensors', 'directories', 'view', 'widen', 'elementBytes', 'widenBytes']) {
    assert.equal(typeof KilnFile.prototype[m], 'function', m);
  }
  for (const name of ['TensorDiff', 'openFile', 'FileSet', 'FileOpener', 'setPlace', 'safetensorsIndexFiles', 'sniffFormat']) {
    assert.equal(core[name], undefined, `core has no ${name}`);
    assert.equal(typeof inspector[name], 'function', `inspector: ${name}`);
  }
  for (const m of ['json', 'tensorsJson']) {
    assert.equal(KilnFile.prototype[m], undefined, `core: no ${m}`);
    assert.equal(typeof inspector.KilnFile.prototype[m], 'function', `inspector: ${m}`);
  }
  // The positional forms and the value tree are gone.
  for (const gone of ['value', 'metadata']) assert.equal(inspector.KilnFile.prototype[gone], undefined, gone);
  for (const gone of ['openModel', 'checkSafetensorsIndex', 'checkGgufSplit']) assert.equal(inspector[gone], undefined, gone);
});

test('the inspector\'s module imports in node as the ES module its package.json says it is', () => {
  const meta = JSON.parse(fs.readFileSync(path.join(root, 'www/inspect/package.json'), 'utf8'));
  assert.equal(meta.type, 'module');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import('${path.join(root, 'www/inspect/kiln_inspect.js')}').then((m) => console.log(typeof m.openFile))`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'function');
  assert.equal(r.stderr, '', 'no warning about the module\'s kind');
});

test('the page reads asynchronously: no FileReaderSync and no synchronous XMLHttpRequest in www/', () => {
  const www = path.join(root, 'www');
  const files = fs.readdirSync(www).filter((f) => /\.(m?js|html)$/.test(f));
  assert.ok(files.includes('worker.js') && files.includes('source.js'), files.join(' '));
  for (const f of files) {
    const text = fs.readFileSync(path.join(www, f), 'utf8');
    assert.ok(!/FileReaderSync/.test(text), `${f} uses FileReaderSync`);
    assert.ok(!/XMLHttpRequest/.test(text), `${f} uses XMLHttpRequest`);
  }
});

test('the TypeScript types follow the split: the core declares what it exports, the inspector the rest', () => {
  const dts = (f) => fs.readFileSync(path.join(root, f), 'utf8');
  const core = dts('www/pkg/kiln_wasm.d.ts');
  const insp = dts('www/inspect/kiln_inspect.d.ts');
  for (const name of ['class KilnFile', 'interface TensorInfo', 'interface TensorView', 'interface KilnError', 'interface OpenOptions', 'openReader(', 'widenBytes(']) {
    assert.ok(core.includes(name), `core .d.ts: ${name}`);
    assert.ok(insp.includes(name), `inspector .d.ts: ${name}`);
  }
  for (const name of ['class TensorDiff', 'class FileSet', 'export function openFile(', 'json(): string']) {
    assert.ok(!core.includes(name), `core .d.ts has no ${name}`);
    assert.ok(insp.includes(name), `inspector .d.ts: ${name}`);
  }
});

test('a message\'s values are its metadata in the JSON form (openFile reads them): 64-bit integers as decimal text, each keyed by its path', async () => {
  const { bytes, meta } = sample('record.kiln');
  const read = (o, l) => bytes.slice(o, o + l);
  const file = await inspector.openFile(bytes.length, read, { name: 'record.kiln', type: meta.type });
  const json = JSON.parse(file.json());
  const value = (key) => json.metadata.find((m) => m.key === key);
  assert.deepEqual(value('id'), { key: 'id', type: 'i64', value: meta.id });
  assert.equal(value('name').value, 'probe run 7');
  assert.equal(value('labels[1]').value, 'dog');
  const paths = file.directories().map((d) => d.path);
  assert.deepEqual(paths, meta.paths);
  assert.equal(file.header.kiln.framed, true, 'framed, as its bytes say');
  // Without a type, a frame of a hash no known type has is SCHEMA, and says the hash.
  await assert.rejects(inspector.openFile(bytes.length, read, { name: 'record.kiln' }), (e) => e.code === 'SCHEMA' && e.found === `0x${schemaHash(meta.type).toString(16).padStart(16, '0')}`);
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
  const byIndex = (i) => ts.find((t) => t.index === i);
  const w = ts.find((t) => t.quant?.scheme === 'scales');
  assert.equal(byIndex(w.quant.scales).name, w.quant.scales_name);
  assert.equal(byIndex(w.quant.scales).dtype, 'e8m0');
  const o = ts.find((t) => t.quant?.scheme === 'scales+outer');
  assert.equal(byIndex(o.quant.outer).dtype, 'f32');
  assert.equal(byIndex(o.quant.outer).name, o.quant.outer_name);
  const q = sample('q4k.kiln').file.tensors()[0];
  assert.equal(q.layout, 'Q4_K');
  assert.equal(q.dtype, 'Q4_K', 'a ggml block type is its dtype, by name');
  assert.ok(q.block_size > 0);
});

test('errors are JS Error objects with code and absolute offset', () => {
  const { meta } = samples.find((s) => s.file === 'invalid.kiln') ? { meta: samples.find((s) => s.file === 'invalid.kiln') } : {};
  const b = new Uint8Array(fs.readFileSync(path.join(root, 'www/samples/invalid.kiln')));
  assert.throws(() => KilnFile.open(b, { type: meta.type, framed: meta.framed }), (e) => {
    assert.equal(e.code, meta.expect);
    assert.equal(e.offset, meta.offset);
    assert.match(e.message, new RegExp(`^${meta.expect}: `));
    return true;
  });
  assert.throws(() => KilnFile.open(b, { type: 'struct{a:}', framed: false }), (e) => e.code === 'BadTypeText');
  const { file } = sample('model.kiln');
  assert.throws(() => file.view(100000), (e) => e.code === 'NoSuchTensor');
  const q = sample('q4k.kiln').file;
  assert.throws(() => q.widen(0, 0, 4), (e) => {
    assert.equal(e.code, 'WrongElementType');
    // The tensor's dtype by its code (its TensorInfo names it Q4_K); a widen asks for no one type.
    assert.equal(e.dtype, `opaque(${q.tensors()[0].dtype_code})`);
    assert.equal(e.requested, undefined);
    return true;
  });
});

test('errors carry their numbers: bytes needed and there, a count and its cap', () => {
  // A list<u8> that claims 100 bytes, with 2 after its count.
  const short = Uint8Array.of(100, 0, 0, 0, 1, 2);
  assert.throws(() => KilnFile.open(short, { type: 'list<u8>', framed: false }), (e) => {
    assert.equal(e.code, 'EOF');
    assert.equal(e.needed, 100);
    assert.equal(e.available, 2);
    assert.equal(e.claimed, undefined);
    return true;
  });
  // The same claim over a cap of 16 elements.
  const capped = new Uint8Array(104);
  capped[0] = 100;
  assert.throws(() => KilnFile.open(capped, { type: 'list<u8>', framed: false, cap: 16 }), (e) => {
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
  const grown = KilnFile.open(run, { type: 'list<u8>', framed: false, cap: 64 << 20 });
  assert.notEqual(wasm.memory.buffer, memory, 'wasm memory grew');
  assert.equal(memory.byteLength, 0, 'the old wasm buffer is detached');
  assert.equal(grown.header.bytes, run.byteLength);
  assert.ok(grown.reads.scratch >= run.byteLength, 'the run was read into wasm memory');
  // The view is over the file's own buffer: untouched by the growth.
  assert.equal(v.length, t.elements);
  assert.deepEqual(Array.from(v.subarray(0, 4)), before);
  // The caller detaches its own buffer: the module refuses, never returns an empty array.
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
  assert.throws(() => file.view(t.index), (e) => e.code === 'Detached');
  assert.throws(() => file.widen(t.index, 0, 1), (e) => e.code === 'Detached');
});

test('the core module\'s memory: a 10,000-tensor file opened again and again reuses what the last open freed', async () => {
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
    const want = (await inspector.KilnFile.openReader(size, readRange, {})).tensors();
    assert.equal(want.length, 10_000);
    const grown = [];
    for (let round = 0; round < 6; round++) {
      const kiln = await KilnFile.openReader(size, readRange, {});
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

// One JSON form: `kiln inspect --json FILE` and the inspector module's
// `json()` of the same file, opened by ranges with the same name, are the
// same text, byte for byte, for every sample, converted model, safetensors
// and GGUF file and set of the test suite; a file that breaks a rule gets
// the same code and offset from both; the module's rows made on demand
// (tensorRows()) are its JSON's tensor objects. Also the README's node example of
// docs/browser.md: a converted model opened with no type.
//
//   node --test json.test.mjs      (after scripts/www.sh --build-only and
//                                   cargo build -p kiln-cli)
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KILN = process.env.KILN_BIN ?? path.join(ROOT, 'target/debug/kiln');
const inspect = await import(path.join(ROOT, 'www/inspect/kiln_inspect.js'));
inspect.initSync({ module: fs.readFileSync(path.join(ROOT, 'www/inspect/kiln_inspect_bg.wasm')) });
const core = await import(path.join(ROOT, 'www/pkg/kiln_wasm.js'));
core.initSync({ module: fs.readFileSync(path.join(ROOT, 'www/pkg/kiln_wasm_bg.wasm')) });

/** A file read by ranges, each read a promise (as a browser's File is). */
function source(file) {
  const fd = fs.openSync(file, 'r');
  const length = fs.fstatSync(fd).size;
  const stats = { reads: 0, bytes: 0 };
  const read = async (at, len) => {
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, at);
    stats.reads += 1; stats.bytes += len;
    return new Uint8Array(buf.buffer, buf.byteOffset, len);
  };
  return { length, read, stats, close: () => fs.closeSync(fd) };
}

/** `kiln inspect --json` of `name` (relative to `cwd`): its text, or its error's code and offset. */
function cli(name, cwd, type) {
  const args = ['inspect', '--json', ...(type ? ['--type', type] : []), name];
  const r = spawnSync(KILN, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status === 0) return { json: r.stdout };
  const m = /^error: .*?: ([^:]+): .* at byte (\d+)\n$/s.exec(r.stderr);
  assert.ok(m, `kiln ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return { code: m[1], offset: Number(m[2]) };
}

/** The module's JSON of the file `name` (relative to `cwd`), opened by ranges with that name. */
async function module(name, cwd, type) {
  const src = source(path.join(cwd, name));
  try {
    const file = await inspect.openFile(src.length, src.read, { name, ...(type ? { type } : {}) });
    const json = file.json();
    // The rows made on demand from columns are the JSON form's tensor
    // objects, member for member, as tensors() gives them.
    const rows = JSON.stringify(file.tensorRows());
    assert.equal(rows, JSON.stringify(JSON.parse(json).tensors), `${name}: tensorRows() against json()`);
    assert.equal(rows, JSON.stringify(file.tensors()), `${name}: tensorRows() against tensors()`);
    file.free();
    return { json };
  } catch (e) {
    return { code: e.code, offset: e.offset };
  } finally {
    src.close();
  }
}

/** The module's JSON of a set, each file opened by ranges and added in set order. */
async function moduleSet(name, cwd, files, index) {
  const set = new inspect.FileSet(name);
  for (const f of files) {
    const src = source(path.join(cwd, f));
    const file = await inspect.openFile(src.length, src.read, { name: f });
    set.add(file);
    file.free();
    src.close();
  }
  try {
    const whole = set.finish(index ? fs.readFileSync(path.join(cwd, index)) : undefined);
    return { json: whole.json() };
  } catch (e) {
    return { code: e.code, offset: e.offset };
  }
}

// Files of the test suite, by folder: each with the type it needs, if any.
const manifest = fs.readFileSync(path.join(ROOT, 'samples/manifest.tsv'), 'utf8')
  .split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t'));
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-json-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));

function converted() {
  const made = [];
  const convert = (from, to) => { execFileSync(KILN, ['convert', '-q', from, to]); made.push(path.basename(to)); };
  convert(path.join(ROOT, 'samples/tiny.gguf'), path.join(scratch, 'tiny-gguf.kiln'));
  convert(path.join(ROOT, 'samples/tiny.safetensors'), path.join(scratch, 'tiny-safetensors.kiln'));
  convert(path.join(ROOT, 'www/samples/shards/model.safetensors.index.json'), path.join(scratch, 'shards.kiln'));
  convert(path.join(ROOT, 'www/samples/shards/tiny-00001-of-00003.gguf'), path.join(scratch, 'split.kiln'));
  // A flipped frame hash and a cut: the same fault from both.
  const bytes = fs.readFileSync(path.join(scratch, 'tiny-gguf.kiln'));
  const flipped = Buffer.from(bytes); flipped[9] ^= 1;
  fs.writeFileSync(path.join(scratch, 'flipped.kiln'), flipped);
  fs.writeFileSync(path.join(scratch, 'cut.kiln'), bytes.subarray(0, bytes.length - 7));
  fs.writeFileSync(path.join(scratch, 'cut.gguf'), fs.readFileSync(path.join(ROOT, 'samples/tiny.gguf')).subarray(0, 300));
  made.push('flipped.kiln', 'cut.kiln', 'cut.gguf');
  return made;
}

test('kiln inspect --json and the module give one text for every file', async () => {
  const cases = [
    ...manifest.map(([file, type, framed]) => ({ dir: path.join(ROOT, 'samples'), file, type: type === 'tensors' && framed === 'plain' ? undefined : type })),
    ...manifest.map(([file]) => ({ dir: path.join(ROOT, 'samples'), file })),
    { dir: path.join(ROOT, 'samples'), file: 'tiny.gguf' },
    { dir: path.join(ROOT, 'samples'), file: 'tiny.safetensors' },
    ...fs.readdirSync(path.join(ROOT, 'www/samples')).filter((f) => /\.(kiln|gguf|safetensors)$/.test(f))
      .map((file) => ({ dir: path.join(ROOT, 'www/samples'), file })),
    ...fs.readdirSync(path.join(ROOT, 'www/samples/compare')).filter((f) => f.endsWith('.kiln'))
      .map((file) => ({ dir: path.join(ROOT, 'www/samples/compare'), file })),
    // (A GGUF split set's first file names the whole set to the CLI: the
    // set's test below.)
    ...fs.readdirSync(path.join(ROOT, 'www/samples/shards'))
      .filter((f) => /\.(gguf|safetensors)$/.test(f) && !/-00001-of-\d{5}\.gguf$/.test(f))
      .map((file) => ({ dir: path.join(ROOT, 'www/samples/shards'), file })),
    ...converted().map((file) => ({ dir: scratch, file })),
  ];
  const latency = path.join(process.env.KILN_E2E_DIR ?? path.join(ROOT, 'target/e2e-files'), 'latency');
  if (fs.existsSync(latency)) {
    for (const file of fs.readdirSync(latency)) cases.push({ dir: latency, file });
  }
  let same = 0, faults = 0;
  for (const { dir, file, type } of cases) {
    const a = cli(file, dir, type);
    const b = await module(file, dir, type);
    if (a.json !== undefined) {
      assert.equal(b.json, a.json, `${file}${type ? ` as ${type}` : ''}: the module's JSON differs from the CLI's`);
      same++;
    } else {
      assert.deepEqual(b, a, `${file}: the same fault`);
      faults++;
    }
  }
  console.log(`one JSON text: ${same} files identical, ${faults} faults with one code and offset`);
  assert.ok(same >= 20 && faults >= 4, `${same} identical, ${faults} faults`);
});

test('a set is one text from the CLI and from the module', async () => {
  const shards = path.join(ROOT, 'www/samples/shards');
  const st = ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'];
  const gg = ['tiny-00001-of-00003.gguf', 'tiny-00002-of-00003.gguf', 'tiny-00003-of-00003.gguf'];
  for (const [name, files, index] of [['model.safetensors.index.json', st, 'model.safetensors.index.json'], [gg[0], gg, undefined]]) {
    const a = cli(name, shards);
    const b = await moduleSet(name, shards, files, index);
    assert.ok(a.json, `${name}: ${JSON.stringify(a)}`);
    assert.equal(b.json, a.json, `${name}: the set's JSON`);
    const model = JSON.parse(a.json);
    assert.equal(model.files.length, 3);
    assert.deepEqual([...new Set(model.tensors.map((t) => t.file))], files);
  }
  // Two files of three: the same refusal from both.
  const cut = await moduleSet(gg[0], shards, gg.slice(0, 2));
  assert.ok(cut.code, 'two of three files are refused');
});

test('the docs/browser.md node example, as written, opens a converted model with no type', () => {
  // The example's own text, with the package resolved to this build and
  // its file to a `kiln convert` output.
  const doc = fs.readFileSync(path.join(ROOT, 'docs/browser.md'), 'utf8');
  const at = doc.indexOf('In node, with `initSync`:');
  assert.ok(at > 0, 'docs/browser.md has its node example');
  const block = /```js\n([\s\S]*?)```/.exec(doc.slice(at))[1];
  const pkg = path.join(ROOT, 'www/pkg');
  const program = block
    .replace("from 'kiln-wasm';", `from '${pkg}/kiln_wasm.js';`)
    .replace("require.resolve('kiln-wasm/kiln_wasm_bg.wasm')", `'${pkg}/kiln_wasm_bg.wasm'`)
    .replace("'model.kiln'", `'${path.join(scratch, 'tiny-gguf.kiln')}'`);
  const script = path.join(scratch, 'example.mjs');
  fs.writeFileSync(script, program);
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
  const lines = out.trim().split('\n');
  assert.match(lines[0], /^token_embd\.weight f32 \[ 3, 4 \] 48$/);
  assert.match(lines[1], /^blk\.0\.attn_q\.weight Q8_0 \[ 2, 32 \] 68$/);
  assert.match(lines.at(-1), /^\d+ bytes read$/);
});

test('a converted model opened by ranges with no type: tensors and values', async () => {
  // As the example reads it: fs.promises ranges, KilnFile.openReader, no type text.
  const file = path.join(scratch, 'tiny-gguf.kiln');
  const src = source(file);
  const kiln = await core.KilnFile.openReader(src.length, src.read);
  assert.equal(kiln.header.kiln.converted_from, 'gguf');
  const names = kiln.tensors().map((t) => t.name);
  assert.deepEqual(names, ['token_embd.weight', 'blk.0.attn_q.weight', 'output_norm.weight']);
  const [at, len] = kiln.elementBytes(0, 0, 4);
  const values = kiln.widenBytes(0, await src.read(at, len), 0, 4);
  assert.equal(values.length, 4);
  assert.equal(kiln.tensors()[1].dtype, 'Q8_0');
  src.close();
});

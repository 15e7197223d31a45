// End-to-end: sets of files and the comparison of two models, in headless
// Chromium (Debian's, driven by playwright-core) against www/serve.mjs on
// 127.0.0.1. The models of www/samples/compare/ differ in known ways,
// listed with every expected difference in compare.json (written by the
// samples example, which computes them from the values it wrote); the
// page's reported differences are checked against each of them.
// Screenshots go to target/e2e-screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openInspector } from './page.mjs';
import { initSync, KilnFile, TensorDiff } from '../../www/inspect/kiln_inspect.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const shots = path.join(root, 'target/e2e-screenshots');
const big = process.env.KILN_E2E_DIR ?? path.join(root, 'target/e2e-files');
const dir = path.join(root, 'www/samples/compare');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'compare.json'), 'utf8'));
let server, browser, page;
let errors = [];

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  ({ server, browser, page, errors } = await openInspector({}));
});

after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(errors, [], 'no errors in the page');
});

const shot = (name) => page.screenshot({ path: path.join(shots, name) });

test('TensorDiff from plain JS: the known differences, whatever the chunk size; bad chunks refused', () => {
  initSync({ module: fs.readFileSync(path.join(root, 'www/inspect/kiln_inspect_bg.wasm')) });
  const load = (f) => KilnFile.openDirectory(new Uint8Array(fs.readFileSync(path.join(dir, f))));
  const a = load(manifest.a), b = load(manifest.b);
  const byName = (k) => new Map(k.tensors().map((t) => [t.name, t]));
  const ta = byName(a), tb = byName(b);
  let checked = 0;
  for (const [name, want] of Object.entries(manifest.expect)) {
    if (!want.mode || want.mode === 'none') continue;
    const x = ta.get(name), y = tb.get(name);
    for (const per of [1, 7, 64, x.elements]) {
      const d = new TensorDiff(x.dtype_code, y.dtype_code);
      for (let first = 0; first < x.elements; first += per) {
        const [atA, lenA] = a.elementBytes(x.index, first, per);
        const [atB, lenB] = b.elementBytes(y.index, first, per);
        d.update(a.bytes.subarray(atA, atA + lenA), b.bytes.subarray(atB, atB + lenB), lenA / (x.bytes / x.elements));
      }
      const got = d.summary();
      d.free();
      for (const k of ['mode', 'compared', 'differing', 'nanMismatch', 'bytesIdentical', 'maxAbs', 'maxRel']) {
        if (want[k] !== undefined) assert.deepEqual(got[k], want[k], `${name} in chunks of ${per}: ${k}`);
      }
      checked++;
    }
  }
  assert.ok(checked >= 20, `${checked} comparisons`);
  const d = new TensorDiff(2, 3); // f32 against f16
  assert.throws(() => d.update(new Uint8Array(8), new Uint8Array(8), 2), (e) => e.code === 'WrongElementType');
  assert.throws(() => d.update(new Uint8Array(4), new Uint8Array(2), 1.5), (e) => e.code === 'WrongElementType');
  assert.throws(() => new TensorDiff(4096 + 12, 2), (e) => e.code === 'WrongElementType', 'an opaque dtype has no elements');
  const bytes = TensorDiff.bytes();
  bytes.update(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 9, 3), 3);
  assert.deepEqual([bytes.summary().differing, bytes.summary().bytesIdentical], [1, false]);
  d.free(); bytes.free(); a.free(); b.free();
});

test('tensorsJson() from plain JS: the facts tensors() gives, as UTF-8 JSON in a buffer of its own', () => {
  initSync({ module: fs.readFileSync(path.join(root, 'www/inspect/kiln_inspect_bg.wasm')) });
  const seen = new Set();
  for (const f of ['model.kiln', 'mxfp4.kiln', 'q4k.kiln']) {
    const k = KilnFile.openDirectory(new Uint8Array(fs.readFileSync(path.join(root, 'www/samples', f))));
    const bytes = k.tensorsJson();
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(bytes.byteOffset, 0);
    assert.equal(bytes.buffer.byteLength, bytes.length, `${f}: the buffer is the text's alone (transferable)`);
    const parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    assert.deepEqual(parsed, k.tensors(), f);
    for (const t of parsed) { seen.add(t.dtype); if (t.quant) seen.add('quantized'); if (t.layout) seen.add('layout'); }
    k.free();
  }
  assert.ok(seen.has('quantized') && seen.has('layout') && seen.has('bf16'), [...seen].join(' '));
});

async function open(files) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', files);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
  return page.evaluate(() => document.body.dataset.state);
}

/** Starts a comparison of the open model with `files`; waits until it ends. */
async function compareWith(files, end = 'done') {
  await page.setInputFiles('#compare-input', files);
  await page.waitForSelector(`#compare[data-state="${end}"]`, { timeout: 300_000 });
}

/** The comparison as the page holds it: key -> { status, result }. */
const comparison = () => page.evaluate(() => Object.fromEntries(
  window.kilnInspector.comparison.rows.map((r) => [r.key, { status: r.status, result: r.result ?? null }])));

/** Every expected difference of compare.json, in the page's state and its table. */
async function checkAgainstManifest() {
  const got = await comparison();
  assert.deepEqual(Object.keys(got).sort(), Object.keys(manifest.expect).sort(), 'the same tensors, paired by name');
  for (const [key, want] of Object.entries(manifest.expect)) {
    const { status, result } = got[key];
    assert.equal(status, want.status, `${key}: status`);
    for (const field of ['mode', 'compared', 'differing', 'nanMismatch', 'bytesIdentical', 'maxAbs', 'maxRel']) {
      if (want[field] !== undefined) assert.deepEqual(result[field], want[field], `${key}: ${field}`);
    }
    const rowStatus = await page.getAttribute(`#compare tr[data-key="${key}"]`, 'data-status');
    assert.equal(rowStatus, want.status, `${key}: the table's row`);
  }
  // The known changes, stated here independently of the manifest.
  const tw = got['tweaked.weight'].result;
  assert.equal(tw.differing, 4);
  assert.equal(tw.nanMismatch, 1);
  assert.deepEqual([tw.maxRel.value, tw.maxRel.at], [2, 100], 'a sign flip is a relative difference of 2');
  assert.equal(tw.maxRel.a, -tw.maxRel.b);
  assert.equal(got['signed.zero'].result.differing, 0, '+0 and -0 are equal values');
  assert.equal(got['signed.zero'].result.bytesIdentical, false);
  assert.equal(got['same.weight'].result.bytesIdentical, true);
  assert.equal(got['counts'].result.differing, 2);
  const cell = (key, cls) => page.locator(`#compare tr[data-key="${key}"] td.${cls}`).innerText();
  assert.equal(await cell('tweaked.weight', 'differing'), '4 of 1,024 (1 NaN)');
  assert.equal(await cell('tweaked.weight', 'max-rel'), '200%');
  assert.equal(await cell('counts', 'differing'), '2 of 10');
  assert.equal(await cell('reshaped.weight', 'differing'), 'shapes differ');
  assert.equal(await cell('retyped.ids', 'differing'), 'not comparable');
  const chips = await page.$$eval('#compare .chips .chip', (c) => Object.fromEntries(c.map((x) => [x.dataset.status, x.innerText])));
  assert.deepEqual(chips, {
    'only-a': '1 only in A', 'only-b': '1 only in B', shape: '1 shape changed', dtype: '2 dtype changed',
    identical: '1 byte-identical', equal: '1 equal values, bytes differ', differs: '2 values differ',
  });
}

test('two models: tensors only in one, dtype and shape changes, identical bytes, the largest differences', async () => {
  assert.equal(await open(path.join(dir, manifest.a)), 'ready');
  await compareWith(path.join(dir, manifest.b));
  await checkAgainstManifest();
  await assertCompareNamesWhole();
  await shot('compare.png');
  // A status chip shows only its tensors; clicked again, all.
  await page.click('#compare .chips [data-status="dtype"]');
  assert.deepEqual(await page.$$eval('#compare tbody tr', (rs) => rs.map((r) => r.dataset.key)), ['cast.weight', 'retyped.ids']);
  await page.click('#compare .chips [data-status="dtype"]');
  assert.equal(await page.locator('#compare tbody tr').count(), Object.keys(manifest.expect).length);
  await page.click('#compare-back');
  await page.waitForSelector('#file:not([hidden])');
  // B that is not valid: A stays open, the panel says why.
  const invalid = JSON.parse(fs.readFileSync(path.join(root, 'www/samples/samples.json'), 'utf8')).find((s) => s.file === 'invalid.kiln');
  await compareWith(path.join(root, 'www/samples/invalid.kiln'), 'error');
  assert.equal(await page.locator('#compare-error-code').innerText(), invalid.expect);
  assert.match(await page.locator('#compare-error').innerText(), new RegExp(`invalid\\.kiln could not be opened as model B: .* at byte ${invalid.offset}$`));
  await shot('compare-error.png');
  await page.click('#compare-back');
  assert.equal(await page.locator('#file-name').innerText(), manifest.a, 'A is still open');
  assert.equal(await page.locator('#table-rows .row').count(), 8);
});

test('a name in two files of a set is listed as a duplicate', async () => {
  assert.equal(await open([path.join(dir, manifest.a), path.join(dir, manifest.set[0].file)]), 'ready');
  const dup = await page.locator('#header-facts dd .warn').innerText();
  assert.match(dup, /^3\n/, 'the first file\'s three tensors are also in a.kiln');
  assert.match(dup, /cast\.weight in a-00001-of-00003\.kiln and a\.kiln|cast\.weight in a\.kiln and a-00001-of-00003\.kiln/);
});

test('a set of three Kiln files: one table, each tensor labelled with its file; compared as one model', async () => {
  const files = manifest.set.map((s) => path.join(dir, s.file));
  assert.equal(await open([files[2], files[0], files[1]]), 'ready', 'picked in any order');
  const rows = await page.$$eval('#table-rows .row', (rs) => rs.map((r) => [r.children[0].innerText, r.lastElementChild.innerText, r.lastElementChild.title]));
  // Labelled by what tells the files apart ("00002"), the whole name in its title.
  const want = manifest.set.flatMap((s) => s.tensors.map((t) => [t, /-(\d{5})-of-/.exec(s.file)[1], s.file]));
  assert.deepEqual(rows, want, 'in set order, each with its file');
  assert.equal(await page.locator('#table-head [data-key="file"]').innerText(), 'File');
  assert.ok(await page.locator('#set-place').isHidden());
  assert.match(await page.locator('#set-files').innerText(), /^3\n/);
  // A tensor of the second file shows its own values (read from that file).
  await page.locator('#table-rows .row', { hasText: 'tweaked.weight' }).click();
  await page.waitForSelector('#detail[data-stats="done"][data-values="done"]', { timeout: 60_000 });
  const first = await page.$$eval('#detail .values span[title]', (s) => s.map((x) => x.innerText));
  assert.equal(first[0], '0');
  assert.match(await page.locator('#detail .kv').innerText(), /File\s+a-00002-of-00003\.kiln/);
  await shot('kiln-set.png');
  // The set against the single file B: the same differences.
  await compareWith(path.join(dir, manifest.b));
  await checkAgainstManifest();
  await shot('compare-set.png');
  await page.click('#compare-back');
});

test('256 MiB against itself: compared in chunks with progress, byte-identical; a second run is cancelled', async () => {
  const file = path.join(big, 'big.kiln');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(big, { recursive: true });
    const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-wasm', '--example', 'make_samples', '--', '--big', file], { cwd: root, stdio: 'inherit' });
    assert.equal(r.status, 0);
  }
  assert.equal(await open(file), 'ready');
  const t0 = Date.now();
  const seen = [];
  const poll = setInterval(async () => { try { seen.push(await page.$eval('#compare-progress', (p) => p.value)); } catch { /* not yet */ } }, 100);
  await compareWith(file);
  clearInterval(poll);
  const ms = Date.now() - t0;
  const got = await comparison();
  const w = got['big.weight'].result;
  assert.equal(got['big.weight'].status, 'identical');
  assert.equal(w.compared, 8192 * 8192);
  assert.equal(w.differing, 0, 'NaN against the same NaN is equal');
  assert.equal(w.bytesA, 8192 * 8192 * 4);
  assert.ok(seen.some((v) => v > 0 && v < 1), `progress between 0 and 1 was shown (${seen.length} samples)`);
  console.log(`# compare 256 MiB with itself: ${ms} ms in the page, ${(await page.evaluate(() => window.kilnInspector.comparison.ms)).toFixed(0)} ms in the worker (printed, not asserted)`);
  await page.click('#compare-back');
  // Cancel: as soon as the progress bar moves.
  await page.setInputFiles('#compare-input', file);
  await page.waitForFunction(() => (document.getElementById('compare-progress')?.value ?? 0) > 0, null, { timeout: 120_000 });
  await page.click('#compare-cancel');
  await page.waitForSelector('#compare[data-state="cancelled"]', { timeout: 60_000 });
  const after = await comparison();
  assert.equal(after['big.weight'].result, null, 'the cancelled tensor has no result');
  assert.match(await page.locator('#compare-label-text').innerText(), /Cancelled/);
  await page.click('#compare-back');
});

test('safetensors and GGUF files against their Kiln conversions: paired by name across formats, every tensor byte-identical', async () => {
  const samples = path.join(root, 'www/samples');
  for (const [file, kiln] of [['tiny.safetensors', 'tiny-safetensors.kiln'], ['tiny.gguf', 'tiny-gguf.kiln']]) {
    assert.equal(await open(path.join(samples, file)), 'ready');
    const modeA = await page.inputValue('#mode');
    await compareWith(path.join(samples, kiln));
    const got = await comparison();
    const names = await page.evaluate(() => window.kilnInspector.tensors.map((t) => t.name));
    assert.ok(names.length >= 3, file);
    assert.deepEqual(Object.keys(got).sort(), [...names].sort(), `${file}: each tensor paired with its converted self`);
    for (const [key, r] of Object.entries(got)) {
      assert.equal(r.status, 'identical', `${file}: ${key}`);
      assert.equal(r.result.bytesA, r.result.bytesB);
    }
    assert.equal(await page.inputValue('#mode'), modeA, 'the page\'s kind fields are A\'s again (B is a framed message)');
    assert.equal(await page.evaluate(() => window.kilnInspector.format), file.split('.').pop());
    if (file.endsWith('.gguf')) {
      assert.ok(Object.values(got).some((r) => r.result.how === 'bytes'), 'a quantized block compared as bytes');
      await shot('compare-gguf-kiln.png');
    }
    await page.click('#compare-back');
  }
});

/**
 * A Llama-shaped safetensors file: the tensor names transformers writes
 * for 32 layers, small f16 payloads, in the order the safetensors writer
 * puts them (one dtype: by name, so "model.layers.10" before
 * "model.layers.2"); and the Kiln file `kiln convert` makes of it (the
 * command built by cargo, as the samples are).
 */
function llamaShaped(dir) {
  const names = ['model.embed_tokens.weight'];
  for (let l = 0; l < 32; l++) {
    for (const p of ['input_layernorm.weight', 'self_attn.q_proj.weight', 'self_attn.k_proj.weight', 'self_attn.v_proj.weight', 'self_attn.o_proj.weight',
      'post_attention_layernorm.weight', 'mlp.gate_proj.weight', 'mlp.up_proj.weight', 'mlp.down_proj.weight']) names.push(`model.layers.${l}.${p}`);
  }
  names.push('model.norm.weight', 'lm_head.weight');
  names.sort((a, b) => (a < b ? -1 : 1));
  const header = { __metadata__: { format: 'pt' } };
  let at = 0;
  const payloads = [];
  names.forEach((name, i) => {
    const shape = name.endsWith('norm.weight') ? [64] : [64, 16];
    const n = shape.reduce((a, b) => a * b, 1);
    const bytes = new Uint8Array(2 * n);
    for (let k = 0; k < n; k++) { const h = 0x3c00 + ((i * 7 + k) % 1024); bytes[2 * k] = h & 0xff; bytes[2 * k + 1] = h >> 8; } // 1.0 to 2.0 in f16
    header[name] = { dtype: 'F16', shape, data_offsets: [at, at + bytes.length] };
    at += bytes.length;
    payloads.push(bytes);
  });
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const st = path.join(dir, 'llama-shaped.safetensors');
  fs.writeFileSync(st, Buffer.concat([len, Buffer.from(json), ...payloads]));
  const kiln = path.join(dir, 'llama-shaped.kiln');
  const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-cli', '--', 'convert', st, kiln], { cwd: root, stdio: 'inherit' });
  assert.equal(r.status, 0, 'kiln convert');
  return { st, kiln, names };
}

/** Every name cell of the comparison shows its whole key, not cut. */
async function assertCompareNamesWhole() {
  const cells = await page.$$eval('#compare td.name', (cs) => cs.map((c) => ({ text: c.innerText, key: c.closest('tr').dataset.key, sw: c.scrollWidth, cw: c.clientWidth })));
  assert.ok(cells.length > 0);
  for (const c of cells) {
    assert.equal(c.text, c.key);
    assert.ok(c.sw <= c.cw, `${c.key} is cut (${c.sw} > ${c.cw})`);
  }
}

test('a converted model: the selector says so, its tensors in its source file\'s order with their whole names (not the message path), compared with its source', async () => {
  const dir = fs.mkdtempSync(path.join(big, 'converted-'));
  try {
    const { st, kiln, names } = llamaShaped(dir);
    assert.equal(await open(kiln), 'ready');
    assert.equal(await page.inputValue('#mode'), 'converted-safetensors');
    assert.match(await page.locator('#header-facts').innerText(), /Format\s+Kiln, converted from safetensors/);
    const listed = await page.evaluate(() => window.kilnInspector.tensors.map((t) => t.name));
    assert.deepEqual(listed, names, 'the source file\'s order');
    const rows = await page.$$eval('#table-rows .row', (rs) => rs.map((r) => ({ text: r.querySelector('.name').innerText, sw: r.querySelector('.name').scrollWidth, cw: r.querySelector('.name').clientWidth })));
    assert.ok(rows.length > 10);
    rows.forEach((r, i) => {
      assert.equal(r.text, names[i], 'the name, not its path in the message');
      assert.ok(r.sw <= r.cw, `${r.text} is cut`);
    });
    await page.locator('#table-rows .row', { hasText: 'model.layers.0.self_attn.q_proj.weight' }).click();
    await page.waitForSelector('#detail[data-stats="done"][data-values="done"]', { timeout: 60_000 });
    assert.match(await page.locator('#detail .kv').innerText(), /Path\s+files\[0\]\.directories\[0\]\.\s*tensors/, 'the path: a secondary fact in the panel');
    await page.waitForSelector('#meta-box[data-meta="done"]');
    await shot('converted-model.png');
    // The same order, the same names: the source opened alone lists as its conversion does.
    assert.equal(await open(st), 'ready');
    assert.deepEqual(await page.evaluate(() => window.kilnInspector.tensors.map((t) => t.name)), names);
    await compareWith(kiln);
    const got = await comparison();
    assert.equal(Object.keys(got).length, names.length);
    for (const [key, r] of Object.entries(got)) assert.equal(r.status, 'identical', key);
    assert.deepEqual(await page.$$eval('#compare tbody tr', (rs) => rs.map((r) => r.dataset.key)), names, 'in the source\'s order');
    await assertCompareNamesWhole();
    await shot('compare-converted.png');
    await page.click('#compare-back');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const shardDir = path.join(root, 'www/samples/shards');
const shards = JSON.parse(fs.readFileSync(path.join(shardDir, 'shards.json'), 'utf8'));
const tableFiles = () => page.$$eval('#table-rows .row', (rs) => rs.map((r) => [r.children[0].innerText, r.lastElementChild.innerText, r.lastElementChild.title]));

test('a safetensors shard set with its index: one table, each tensor labelled with its shard', async () => {
  const files = [path.join(shardDir, shards.index), ...shards.shards.map((s) => path.join(shardDir, s.file)).reverse()];
  assert.equal(await open(files), 'ready');
  const want = shards.shards.flatMap((s) => s.tensors.map((t) => [t, /-(\d{5})-of-/.exec(s.file)[1], s.file]));
  assert.deepEqual((await tableFiles()).sort(), want.sort(), 'every tensor of every shard, with its file');
  assert.match(await page.locator('#set-files').innerText(), /^3\n/);
  assert.equal(await page.locator('#file-name').innerText(), `${shards.index}: 3 shards`);
  assert.deepEqual(await page.$$eval('#table-head > div', (h) => h.map((x) => x.innerText.replace(/ [\u25b2\u25bc]$/, ''))),
    ['Name', 'Dtype', 'Shape', 'Elements', 'Bytes', 'Offset', 'File'], 'no empty Quantization and Layout columns');
  // A tensor of the last shard shows its values, read from that shard.
  await page.fill('#filter', 'lm_head');
  await page.locator('#table-rows .row', { hasText: 'lm_head.weight' }).click();
  await page.waitForSelector('#detail[data-stats="done"][data-values="done"]', { timeout: 60_000 });
  assert.match(await page.locator('#detail .kv').innerText(), /File\s+model-00003-of-00003\.safetensors/);
  assert.equal((await page.$$eval('#detail .values span[title]', (s) => s.map((x) => x.innerText)))[0], '0');
  await page.fill('#filter', '');
  await page.evaluate(() => document.getElementById('filter').dispatchEvent(new Event('input')));
  await shot('safetensors-set.png');
});

test('an index that disagrees with the shards: the error names the tensor and both files', async () => {
  const files = [path.join(shardDir, shards.bad.index), ...shards.shards.map((s) => path.join(shardDir, s.file))];
  assert.equal(await open(files), 'error');
  const message = await page.locator('#error-message').innerText();
  assert.equal(await page.locator('#error-code').innerText(), 'safetensors');
  assert.equal(await page.locator('#error h2').innerText(), 'The files are not one model');
  assert.ok(shards.bad.error.endsWith(message), `${message} is kiln-convert's own words: ${shards.bad.error}`);
  for (const word of [shards.bad.tensor, shards.bad.in, shards.bad.indexSays]) assert.ok(message.includes(word), `${word} in ${message}`);
  await shot('safetensors-set-bad-index.png');
  // The index alone: the page says which shards to pick with it.
  assert.equal(await open(path.join(shardDir, shards.index)), 'error');
  assert.equal(await page.locator('#error-code').innerText(), 'NoShards');
  for (const s of shards.shards) assert.ok((await page.locator('#error-message').innerText()).includes(s.file));
});

test('a GGUF split set: one table labelled by file; two files of three are refused by the split keys', async () => {
  const files = shards.gguf.shards.map((s) => path.join(shardDir, s.file));
  assert.equal(await open([files[1], files[2], files[0]]), 'ready');
  const want = shards.gguf.shards.flatMap((s) => s.tensors.map((t) => [t, /-(\d{5})-of-/.exec(s.file)[1], s.file]));
  assert.deepEqual(await tableFiles(), want, 'in split order, each with its file');
  await shot('gguf-split-set.png');
  assert.equal(await open(files.slice(0, 2)), 'error');
  assert.ok(shards.gguf.twoOfThree.endsWith(await page.locator('#error-message').innerText()), 'kiln-convert\'s words');
  assert.match(await page.locator('#error-message').innerText(), /split\.count is 3, but the set has 2 files/);
});

test('a GGUF split file opened alone: the page says which file of the set it is, from its split keys', async () => {
  const [first, second] = shards.gguf.shards.map((s) => path.join(shardDir, s.file));
  assert.equal(await open(second), 'ready');
  const note = page.locator('#set-place');
  assert.ok(await note.isVisible(), 'the set note is shown');
  const said = await note.innerText();
  assert.match(said, /^File 2 of 3 of a GGUF split set \(its split\.no and split\.count say so\)/);
  const total = shards.gguf.shards.reduce((a, s) => a + s.tensors.length, 0);
  assert.ok(said.includes(`its ${shards.gguf.shards[1].tensors.length} tensors of the set\u2019s ${total}`), said);
  assert.match(said, /Open all 3 files to see the whole model/);
  for (const s of shards.gguf.shards) assert.ok(said.includes(s.file), `${s.file} in ${said}`);
  assert.deepEqual(await page.evaluate(() => window.kilnInspector.setPlace), {
    from: 'split keys', no: 2, count: 3, tensorsCount: total, files: shards.gguf.shards.map((s) => s.file),
  });
  assert.equal(await page.locator('#count').innerText(), `${shards.gguf.shards[1].tensors.length} tensors`);
  await shot('gguf-split-alone.png');
  // Renamed, the file still knows its place (the keys say it), not the others' names.
  assert.equal(await open({ name: 'part.gguf', mimeType: 'application/octet-stream', buffer: fs.readFileSync(first) }), 'ready');
  assert.match(await note.innerText(), /^File 1 of 3 of a GGUF split set .*Open all 3 files to see the whole model\.$/s);
  // A safetensors shard alone: only its name says so.
  assert.equal(await open(path.join(shardDir, shards.shards[2].file)), 'ready');
  const st = await note.innerText();
  assert.match(st, /^File 3 of 3 of a safetensors shard set \(by its name\): the table shows this file\u2019s tensors only\. Open all 3 shards with their index/);
  assert.ok(st.includes(shards.index), st);
  // A whole file, and the whole set: no note.
  assert.equal(await open(path.join(root, 'www/samples/tiny.gguf')), 'ready');
  assert.ok(await note.isHidden(), 'a whole GGUF file is in no set');
  assert.equal(await open(shards.gguf.shards.map((s) => path.join(shardDir, s.file))), 'ready');
  assert.ok(await note.isHidden(), 'the whole set open: no note');
});

/**
 * Drops `files` on the page as a user drags them from a file manager: a
 * DataTransfer holding them, a dragover, then a drop event on the page.
 * Resolves to whether the page showed its drop target and took the drop.
 */
async function drop(files) {
  const payload = files.map((f) => ({ name: path.basename(f), bytes: [...fs.readFileSync(f)] }));
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  const r = await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([new Uint8Array(f.bytes)], f.name));
    const target = document.querySelector('main');
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    const shown = document.body.classList.contains('dragging');
    const taken = !target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    return { shown, taken, after: document.body.classList.contains('dragging') };
  }, payload);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
  return { ...r, state: await page.evaluate(() => document.body.dataset.state) };
}

test('several files dropped on the page: a safetensors shard set with its index, a GGUF split set; one table, each tensor labelled with its file', async () => {
  const st = [...shards.shards.map((s) => path.join(shardDir, s.file)).reverse(), path.join(shardDir, shards.index)];
  const dropped = await drop(st);
  assert.deepEqual(dropped, { shown: true, taken: true, after: false, state: 'ready' }, 'the drop target shows, the page takes the drop');
  const want = shards.shards.flatMap((s) => s.tensors.map((t) => [t, /-(\d{5})-of-/.exec(s.file)[1], s.file]));
  assert.deepEqual((await tableFiles()).sort(), want.sort(), 'every tensor of every shard, with its file');
  assert.equal(await page.locator('#file-name').innerText(), `${shards.index}: 3 shards`);
  assert.match(await page.locator('#set-files').innerText(), /^3\n/);
  assert.ok(await page.locator('#set-place').isHidden());
  await page.fill('#filter', 'lm_head');
  await page.locator('#table-rows .row', { hasText: 'lm_head.weight' }).click();
  await page.waitForSelector('#detail[data-stats="done"][data-values="done"]', { timeout: 60_000 });
  assert.match(await page.locator('#detail .kv').innerText(), /File\s+model-00003-of-00003\.safetensors/);
  await page.fill('#filter', '');
  await shot('drop-safetensors-set.png');

  const gguf = shards.gguf.shards.map((s) => path.join(shardDir, s.file));
  assert.equal((await drop([gguf[2], gguf[0], gguf[1]])).state, 'ready');
  const wantGguf = shards.gguf.shards.flatMap((s) => s.tensors.map((t) => [t, /-(\d{5})-of-/.exec(s.file)[1], s.file]));
  assert.deepEqual(await tableFiles(), wantGguf, 'in split order, each with its file');
  await shot('drop-gguf-set.png');
  // Two files of three dropped: refused by the split keys, as when picked.
  assert.equal((await drop(gguf.slice(1))).state, 'error');
  assert.match(await page.locator('#error-message').innerText(), /split\.count is 3, but the set has 2 files/);
});

test('?sample=…&compare=…: a bundled sample compared with another from the URL', async () => {
  await page.goto(`${server.url}?sample=model.kiln&compare=model.kiln`);
  await page.waitForSelector('#compare[data-state="done"]', { timeout: 120_000 });
  const got = await comparison();
  assert.equal(Object.keys(got).length, 19);
  for (const [key, r] of Object.entries(got)) assert.equal(r.status, 'identical', key);
  assert.match(await page.locator('#compare h2').innerText(), /^A\s+model\.kiln\s+\u2194\s+B\s+model\.kiln$/);
});

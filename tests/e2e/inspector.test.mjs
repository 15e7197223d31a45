// End-to-end: the inspector page in headless Chromium (Debian's, driven by
// playwright-core; no browser download), served on 127.0.0.1 by
// www/serve.mjs, which this test starts and stops. Every sample is opened
// through the page's file input; screenshots go to target/e2e-screenshots/.
//
// Large files (10,000 tensors; 256 MiB) are written by the samples example
// into KILN_E2E_DIR (scripts/stages/www.sh makes them; made here if absent).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const shots = path.join(root, 'target/e2e-screenshots');
const big = process.env.KILN_E2E_DIR ?? path.join(root, 'target/e2e-files');
const samples = path.join(root, 'www/samples');
let server, browser, page;
const errors = [];

function largeFile(name, flag) {
  const file = path.join(big, name);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(big, { recursive: true });
    const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-wasm', '--example', 'make_samples', '--', flag, file], { cwd: root, stdio: 'inherit' });
    assert.equal(r.status, 0, `writing ${name}`);
  }
  return file;
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  server = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(server.url);
  await page.waitForSelector('body[data-state="empty"]');
});

after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(errors, [], 'no errors in the page');
});

async function open(file, { mode, type } = {}) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  if (mode) await page.selectOption('#mode', mode);
  if (type) await page.fill('#type-text', type);
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
  return page.evaluate(() => document.body.dataset.state);
}

const statsDone = () => page.waitForSelector('#detail[data-stats="done"], #detail[data-stats="none"]', { timeout: 120_000 });
const shot = (name) => page.screenshot({ path: path.join(shots, name) });
const text = (sel) => page.locator(sel).innerText();
/** Opens `file` and waits for the table; the milliseconds it took (printed, never asserted). */
async function openTimed(file) {
  const t0 = Date.now();
  assert.equal(await open(file), 'ready');
  return Date.now() - t0;
}
const rowsText = () => page.$$eval('#table-rows .row', (rows) => rows.map((r) => Array.from(r.children, (c) => c.innerText)));
async function selectRow(name) {
  await page.fill('#filter', name);
  await page.locator('#table-rows .row', { hasText: name }).first().click();
  await statsDone();
}

test('model.kiln: the table, sorting, filtering, values, statistics', async () => {
  assert.equal(await open(path.join(samples, 'model.kiln')), 'ready');
  assert.equal(await text('#count'), '19 tensors');
  let rows = await rowsText();
  assert.deepEqual(rows[0].slice(0, 6), ['embed.weight', 'f32', '[64, 48]', '3,072', '12.0 KiB', '0xac0']);
  assert.deepEqual(rows.map((r) => r[1]).sort(), ['bf16', 'bool', 'e2m1', 'e8m0', 'f16', 'f32', 'f64', 'f8e4m3', 'f8e5m2', 'i16', 'i32', 'i4', 'i64', 'i8', 'u16', 'u32', 'u4', 'u64', 'u8']);
  await statsDone();
  assert.match(await text('#detail'), /zero-copy/);
  assert.ok(await page.locator('#detail canvas.heat').isVisible());
  await shot('model.png');
  // Sort by bytes, descending.
  await page.click('.table-head [data-key="byteLength"]');
  await page.click('.table-head [data-key="byteLength"]');
  rows = await rowsText();
  assert.equal(rows[0][0], 'embed.weight');
  assert.equal(rows.at(-1)[0], 'mx.e8m0');
  // Values of a few dtypes, as the page shows them.
  await selectRow('layers.0.norm.weight');
  assert.match(await text('#detail .values'), /^1\s+1\.01563\s+1\.03125\s+1\.04688/);
  await selectRow('packed.i4');
  assert.match(await text('#detail .values'), /^1\s+-1\s+2\s+7\s+-8\s+-7/);
  await selectRow('mx.e2m1');
  assert.match(await text('#detail .values'), /^0\s+0\.5\s+1\s+1\.5\s+2\s+3\s+4\s+6/);
  await selectRow('tokens.i64');
  assert.match(await text('#detail .values'), /1099511627776/);
  await selectRow('layers.0.attn.q.weight');
  const stats = await text('#detail .stats');
  assert.match(stats, /NAN\s+0/);
  await shot('model-f16.png');
});

test('mxfp4.kiln: quantization links to scale and outer tensors', async () => {
  assert.equal(await open(path.join(samples, 'mxfp4.kiln')), 'ready');
  assert.equal(await text('#count'), '5 tensors');
  await selectRow('blk.0.ffn_gate.weight');
  const detail = await text('#detail');
  assert.match(detail, /scales\+outer: groups of 16 along axis 1/);
  assert.match(detail, /Kiln never applies the scale/);
  await page.click('#detail button.link:text("blk.0.ffn_gate.weight.outer")');
  await statsDone();
  assert.match(await text('#detail h2'), /blk\.0\.ffn_gate\.weight\.outer/);
  assert.match(await text('#detail'), /Outer scale of/);
  await page.click('#detail button.link:text("blk.0.ffn_gate.weight")');
  await statsDone();
  await shot('mxfp4.png');
});

test('q4k.kiln: an opaque block with its layout name', async () => {
  assert.equal(await open(path.join(samples, 'q4k.kiln')), 'ready');
  const rows = await rowsText();
  assert.equal(rows[0][7], 'Q4_K');
  await selectRow('blk.0.attn_q.weight');
  assert.match(await text('#detail'), /Q4_K, block 144 B, 2 blocks/);
  assert.match(await text('#detail .values'), /^03\s+20\s+3d/);
  await shot('q4k.png');
});

test('record.kiln: a framed message, its type found by the frame hash, fields as a tree', async () => {
  await page.evaluate(() => { document.getElementById('type-text').value = ''; });
  assert.equal(await open(path.join(samples, 'record.kiln')), 'ready');
  assert.equal(await page.inputValue('#mode'), 'framed');
  assert.match(await page.inputValue('#type-text'), /^struct\{id:i64,/);
  assert.equal(await text('#count'), '8 tensors');
  const tree = await text('#tree');
  assert.match(tree, /id: 9007199254740993n/);
  assert.match(tree, /name: "probe run 7"/);
  assert.match(tree, /precision: 0\.9375/);
  assert.deepEqual(await page.$$eval('#directories li button', (b) => b.map((x) => x.innerText)), ['layers[0].w', 'layers[1].w', 'layers[2].w', 'batch']);
  await page.locator('#table-rows .row', { hasText: 'layers[1].w › weight' }).click();
  await statsDone();
  assert.equal(await text('#detail .badge'), 'zero-copy');
  await shot('record-weight.png');
  // An i32 payload at an odd absolute offset: the view is a copy that says why.
  await page.locator('#table-rows .row', { hasText: 'batch › labels' }).click();
  await statsDone();
  assert.equal(await text('#detail .badge'), 'copy');
  assert.match(await text('#detail'), /misaligned: absolute offset 5971/);
  assert.match(await text('#detail .values'), /^3\s+1\s+4\s+1/);
  await shot('record.png');
});

test('invalid.kiln: the code, the message, and the bytes around the offset', async () => {
  assert.equal(await open(path.join(samples, 'invalid.kiln'), { mode: 'directory' }), 'error');
  assert.equal(await text('#error-code'), 'TYPE');
  assert.match(await text('#error-message'), /bool byte other than 0 or 1/);
  // The fault is the bad bool byte itself (a 2), at the offset the sample
  // manifest records from kiln-nostd's own check.
  const manifest = JSON.parse(fs.readFileSync(path.join(samples, 'samples.json'), 'utf8'));
  const offset = manifest.find((s) => s.file === 'invalid.kiln').offset;
  const where = `byte ${offset.toLocaleString('en-US')} (0x${offset.toString(16)})`;
  assert.ok((await text('#error-where')).includes(where), where);
  const bytes = fs.readFileSync(path.join(samples, 'invalid.kiln'));
  assert.equal(bytes[offset], 2);
  assert.equal(await text('#hex .hit'), '02');
  await shot('invalid.png');
});

test('1,000 tensors: opens and builds its table (the time is reported, not asserted)', async () => {
  const file = largeFile('thousand.kiln', '--thousand');
  const openMs = await openTimed(file);
  assert.equal(await text('#count'), '1,000 tensors');
  const rows = await rowsText();
  assert.ok(rows.length > 10 && rows.length < 80, `${rows.length} rows in the DOM`);
  // (The sort chosen for an earlier file stays, so the rows are checked
  // as this file's, not for their order.)
  assert.ok(rows.every((r) => /^0\d{3}[a-z]$/.test(r[0])), 'rows of this file');
  console.log(`1,000 tensors: open and table ${openMs} ms (file picked to table drawn)`);
});

test('10,000 tensors: opens, sorts, filters and scrolls', async () => {
  const file = largeFile('many.kiln', '--many');
  const openMs = await openTimed(file);
  assert.equal(await text('#count'), '10,000 tensors');
  const sortMs = await page.evaluate(async () => {
    const t = performance.now();
    document.querySelector('.table-head [data-key="elements"]').click();
    document.querySelector('.table-head [data-key="name"]').click();
    return performance.now() - t;
  });
  // Sorted by name again (the second click): the first rows are the
  // smallest names. (Times are printed, never asserted: the machine is
  // shared.)
  const sorted = (await rowsText()).map((r) => r[0]);
  assert.deepEqual(sorted.slice(0, 3), ['0000b', '0000d', '0000g']);
  const filterMs = await page.evaluate(() => {
    const t = performance.now();
    const f = document.getElementById('filter');
    f.value = 'bf16';
    f.dispatchEvent(new Event('input'));
    return performance.now() - t;
  });
  assert.equal(await text('#count'), '2,000 of 10,000');
  await page.fill('#filter', '');
  await page.locator('#table-scroll').evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await page.waitForTimeout(100);
  const rows = await rowsText();
  assert.ok(rows.length < 80, 'only visible rows are in the DOM');
  assert.ok(rows.some((r) => r[0] === '0999q' || r[0].startsWith('0999')), 'the last rows are rendered');
  console.log(`10,000 tensors: open ${openMs} ms, two sorts ${sortMs.toFixed(0)} ms, filter ${filterMs.toFixed(0)} ms`);
  await shot('many.png');
});

test('256 MiB: no copy of the payloads, statistics in chunks while the page stays responsive', async () => {
  const file = largeFile('big.kiln', '--big');
  assert.ok(fs.statSync(file).size > 256 << 20);
  const openMs = await openTimed(file);
  const facts = await page.evaluate(() => {
    const s = window.kilnInspector;
    const v = s.kiln.view(0);
    return { copied: s.kiln.header.copiedBytes, zero: v.array.buffer === s.bytes.buffer && !v.copied, length: v.array.length };
  });
  assert.ok(facts.copied < 1 << 20, `copied ${facts.copied} bytes into wasm memory`);
  assert.ok(facts.zero);
  assert.equal(facts.length, 64 << 20);
  // Watch the frame gaps while the statistics run.
  await page.evaluate(() => {
    window.gaps = { max: 0, last: performance.now(), on: true, progress: 0 };
    const loop = () => {
      const now = performance.now();
      window.gaps.max = Math.max(window.gaps.max, now - window.gaps.last);
      window.gaps.last = now;
      const p = document.querySelector('#detail progress');
      if (p && p.value > 0 && p.value < 1) window.gaps.progress++;
      if (window.gaps.on) requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  });
  await page.locator('#table-rows .row', { hasText: 'big.weight' }).click();
  await page.waitForFunction(() => { const p = document.querySelector('#detail progress'); return p && p.value > 0.2; }, null, { timeout: 60_000 });
  await shot('big-progress.png');
  await statsDone();
  const gaps = await page.evaluate(() => { window.gaps.on = false; return window.gaps; });
  const stats = await text('#detail .stats');
  assert.match(stats, /NAN\s+1/);
  assert.match(stats, /INF\s+1/);
  assert.ok(gaps.progress > 3, 'progress was shown while computing');
  console.log(`256 MiB: open ${openMs} ms, copied ${facts.copied} B, longest frame gap ${gaps.max.toFixed(0)} ms`);
  await shot('big.png');
});

// End-to-end: the inspector page in headless Chromium (Debian's, driven by
// playwright-core; no browser download) at 1,280 x 900, served on
// 127.0.0.1 by www/serve.mjs, which this test starts and stops (and whose
// log of requests it reads). Every sample is opened through the page's
// file input or by URL; screenshots go to target/e2e-screenshots/.
//
// Large files (10,000 tensors; 256 MiB) are written by the samples example
// into KILN_E2E_DIR (scripts/stages/www.sh makes them; made here if absent);
// the latency run's Llama-, Qwen3- and gpt-oss-shaped GGUF heads by
// latency-files.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../www/serve.mjs';
import { openInspector } from './page.mjs';
import { latencyFiles } from './latency-files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const shots = path.join(root, 'target/e2e-screenshots');
const big = process.env.KILN_E2E_DIR ?? path.join(root, 'target/e2e-files');
const samples = path.join(root, 'www/samples');
let server, browser, page;
const served = {}; // extra files of the page's server, by URL path
const log = []; // the server's requests: { path, range }
let errors = [];
/** The first read of a file opened by ranges (the inspector module's firstRead()). */
const FIRST_READ = 2 << 20;
/** The bytes statistics read of a large tensor unless all is asked for (www/stats.js). */
const SAMPLE = 4 << 20;

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
  ({ server, browser, page, errors } = await openInspector({ extra: served, stats: { sent: 0, requests: 0, paths: {}, log } }));
});

after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(errors, [], 'no errors in the page');
});

async function open(file) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
  return page.evaluate(() => document.body.dataset.state);
}

const statsDone = async () => {
  await page.waitForSelector('#detail[data-stats="done"], #detail[data-stats="none"]', { timeout: 120_000 });
  await page.waitForSelector('#detail[data-values="done"]', { timeout: 120_000 });
};
const open_ = (file) => open(file);
const shot = (name) => page.screenshot({ path: path.join(shots, name) });
const text = (sel) => page.locator(sel).innerText();
/**
 * Opens `file` and waits for the table; the milliseconds it took (printed,
 * never asserted). The page reports its state change itself (a mutation
 * observer, set up before the file is picked): a polled wait would add up
 * to its polling interval, 100 ms once the wait is long, to every figure.
 */
async function openTimed(file) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  const settled = page.evaluate(() => new Promise((resolve) => {
    const o = new MutationObserver(() => {
      const s = document.body.dataset.state;
      if (s === 'ready' || s === 'error') { o.disconnect(); resolve(s); }
    });
    o.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
  }));
  const t0 = Date.now();
  await page.setInputFiles('#file-input', file);
  assert.equal(await settled, 'ready');
  return Date.now() - t0;
}
const rowsText = () => page.$$eval('#table-rows .row', (rows) => rows.map((r) => Array.from(r.children, (c) => c.innerText)));
async function selectRow(name) {
  await page.fill('#filter', name);
  await page.locator('#table-rows .row', { hasText: name }).first().click();
  await statsDone();
}
/** Opens `url` (a path on the test server) in the page, as `?url=` does; resolves to the page's state. */
async function openUrl(url) {
  await page.goto(`${server.url}?url=${encodeURIComponent(url)}`);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
  return page.evaluate(() => document.body.dataset.state);
}
/** The server's requests for `path` since `from` (an index in the log). */
const requestsFor = (p, from = 0) => log.slice(from).filter((r) => r.path === p);

/**
 * Every row in view shows its tensor's whole name, not cut: the cell's
 * text is the name (then, where names repeat, its path), and it overflows
 * neither across nor down.
 */
async function assertNamesWhole(what) {
  const rows = await page.evaluate(() => {
    const byIndex = new Map(window.kilnInspector.tensors.map((t) => [t.index, t]));
    return Array.from(document.querySelectorAll('#table-rows .row'), (r) => {
      const c = r.querySelector('.name');
      const t = byIndex.get(Number(r.dataset.index));
      return { text: c.innerText, name: t.name ?? `#${t.index_in_directory}`, path: t.path, sw: c.scrollWidth, cw: c.clientWidth, sh: c.scrollHeight, ch: c.clientHeight };
    });
  });
  assert.ok(rows.length > 0, `${what}: rows in view`);
  for (const r of rows) {
    assert.ok(r.text === r.name || r.text === `${r.name} \u00b7 ${r.path}`, `${what}: the cell says ${JSON.stringify(r.text)} for ${r.name}`);
    assert.ok(r.sw <= r.cw, `${what}: ${r.name} is cut across (${r.sw} > ${r.cw} px)`);
    assert.ok(r.sh <= r.ch + 1, `${what}: ${r.name} is cut below (${r.sh} > ${r.ch} px)`);
  }
  return rows.length;
}

/** The histogram's and heatmap's labels: the two ends on one line apart, any note below them. */
async function assertAxesApart() {
  const axes = await page.$$eval('#detail figure.chart', (figs) => figs.map((f) => {
    const box = (e) => e && e.getBoundingClientRect().toJSON();
    return { lo: box(f.querySelector('.axis .lo')), hi: box(f.querySelector('.axis .hi')), note: box(f.querySelector('.axis-note')), axis: box(f.querySelector('.axis')) };
  }));
  for (const a of axes) {
    const apart = a.lo.right <= a.hi.left || a.lo.bottom <= a.hi.top;
    assert.ok(apart, `axis labels overlap: ${JSON.stringify(a)}`);
    if (a.note) assert.ok(a.note.top >= a.axis.bottom - 0.5, `the axis note is below the labels: ${JSON.stringify(a)}`);
  }
  return axes.length;
}

test('model.kiln: the table, sorting, filtering, values, statistics', async () => {
  assert.equal(await open(path.join(samples, 'model.kiln')), 'ready');
  assert.equal(await text('#count'), '19 tensors');
  assert.equal(await page.inputValue('#mode'), 'directory', 'the selector shows what the module found');
  let rows = await rowsText();
  assert.deepEqual(rows[0].slice(0, 6), ['embed.weight', 'f32', '[64, 48]', '3,072', '12.0 KiB', '0xac0']);
  assert.deepEqual(rows.map((r) => r[1]).sort(), ['bf16', 'bool', 'e2m1', 'e8m0', 'f16', 'f32', 'f64', 'f8e4m3', 'f8e5m2', 'i16', 'i32', 'i4', 'i64', 'i8', 'u16', 'u32', 'u4', 'u64', 'u8']);
  await statsDone();
  assert.match(await text('#detail'), /aligned/);
  assert.ok(await page.locator('#detail canvas.heat').isVisible());
  assert.match(await text('#stats-source'), /^All 3,072 elements, 12\.0 KiB read/);
  assert.equal(await assertAxesApart(), 2, 'the histogram\'s and the heatmap\'s labels');
  await assertNamesWhole('model.kiln');
  await shot('model.png');
  // Sort by bytes, descending; a third click is the model's own order again.
  await page.click('.table-head [data-key="bytes"]');
  await page.click('.table-head [data-key="bytes"]');
  rows = await rowsText();
  assert.equal(rows[0][0], 'embed.weight');
  assert.equal(rows.at(-1)[0], 'mx.e8m0');
  await page.click('.table-head [data-key="bytes"]');
  assert.equal((await rowsText())[1][0], 'layers.0.attn.q.weight');
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
  // Every tensor's labels, each dtype's range of values: never on top of one another.
  await page.fill('#filter', '');
  for (const name of ['layers.0.norm.weight', 'stats.i16', 'hashes.u64', 'tokens.i64', 'mx.e8m0']) {
    await selectRow(name);
    assert.ok(await assertAxesApart() >= 1, name);
  }
  await selectRow('layers.0.attn.q.weight');
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
  assert.equal(rows[0][1], 'Q4_K', 'the Dtype column shows the ggml type');
  assert.equal(rows[0].at(-1), '4.5 bpw', 'and the Quant column its bits per weight');
  await selectRow('blk.0.attn_q.weight');
  assert.match(await text('#detail'), /Q4_K, block 144 B, 2 blocks/);
  assert.match(await text('#detail .values'), /^03\s+20\s+3d/);
  await shot('q4k.png');
});

test('record.kiln: a framed message, its type found by the frame hash among the page\'s known types, its values as metadata', async () => {
  await page.evaluate(() => { document.getElementById('type-text').value = ''; });
  assert.equal(await open(path.join(samples, 'record.kiln')), 'ready');
  assert.equal(await page.inputValue('#mode'), 'framed');
  assert.match(await page.inputValue('#type-text'), /^struct\{id:i64,/);
  assert.equal(await text('#count'), '8 tensors');
  await page.waitForSelector('#meta-box[data-meta="done"]');
  const meta = await text('#meta');
  assert.match(meta, /id i64\n9007199254740993/);
  assert.match(meta, /name str\nprobe run 7/);
  assert.match(meta, /scores\["precision"\] f64\n0\.9375/);
  assert.deepEqual(await page.$$eval('#directories li button', (b) => b.map((x) => x.innerText)), ['layers[0].w', 'layers[1].w', 'layers[2].w', 'batch']);
  // Names that repeat show their path after them, dimmed.
  assert.equal(await assertNamesWhole('record.kiln'), 8);
  await page.locator('#table-rows .row', { hasText: 'weight \u00b7 layers[1].w' }).click();
  await statsDone();
  assert.equal(await text('#detail .badge'), 'aligned');
  await shot('record-weight.png');
  // An i32 payload at an odd absolute offset: the view is a copy that says why.
  await page.locator('#table-rows .row', { hasText: /^labels/ }).click();
  await statsDone();
  assert.equal(await text('#detail .badge'), 'misaligned');
  assert.match(await text('#detail'), /offset not a multiple of 4/);
  assert.match(await text('#detail'), /5,971 \(0x1753\)/);
  assert.match(await text('#detail .values'), /^3\s+1\s+4\s+1/);
  await shot('record.png');
});

test('invalid.kiln: the code, the message, and the bytes around the offset', async () => {
  assert.equal(await open(path.join(samples, 'invalid.kiln')), 'error');
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
  const openIo = await page.evaluate(() => window.kilnInspector.openIo);
  // The check walks 10,000 small payloads in order: the first read (2 MiB)
  // holds this 2 MB file, a larger one is read on in windows that grow;
  // no byte is read twice.
  assert.ok(openIo.requests <= 10, `${openIo.requests} reads`);
  assert.ok(openIo.bytesRead <= fs.statSync(file).size + (64 << 10), `${openIo.bytesRead} bytes read`);
  console.log(`speed: 10,000-tensor file picked to full table ${openMs} ms (goal < 300 ms), read ${openIo.bytesRead} B in ${openIo.requests} reads`);
  // Where the open's time goes: the worker's check, its tensors' facts as
  // columns, their buffer sent to the page (transferred) and made into rows
  // there, the rest of the worker's round trip, and the page's table (only
  // the visible rows are in the DOM) up to the frame that draws it.
  const split = await page.evaluate(async () => {
    const s = window.kilnInspector;
    while (s.drawnMs === undefined) await new Promise((r) => requestAnimationFrame(r));
    const f = s.file;
    return { check: s.checkMs, facts: f.factsMs, post: f.postMs, parse: f.parseMs, worker: s.openMs, drawn: s.drawnMs };
  });
  const rest = split.worker - split.check - split.facts - split.post - split.parse;
  console.log(`  of which: check ${split.check.toFixed(0)} ms, facts ${split.facts.toFixed(0)} ms, sent ${split.post.toFixed(0)} ms, made into rows ${split.parse.toFixed(0)} ms, ` +
    `the rest of the worker's round trip ${rest.toFixed(0)} ms; in the page, picked to the table's frame ${split.drawn.toFixed(0)} ms; the test driver ${(openMs - split.drawn).toFixed(0)} ms`);
  await shot('many.png');
});

test('256 MiB: the open reads the head only; statistics from a bounded sample, then all of it on request in the worker while the page stays responsive', async () => {
  const file = largeFile('big.kiln', '--big');
  assert.ok(fs.statSync(file).size > 256 << 20);
  const openMs = await openTimed(file);
  const facts = await page.evaluate(() => ({ read: window.kilnInspector.openIo.bytesRead, memory: window.kilnInspector.openIo.wasmMemory }));
  assert.ok(facts.read <= FIRST_READ, `the open read ${facts.read} bytes (its first read)`);
  assert.ok(facts.memory <= 64 << 20, `wasm memory ${facts.memory}`);
  // By default, a sample: at most SAMPLE bytes, and the panel says so and
  // what all would cost (big.weight is the first tensor, shown at once).
  await statsDone();
  assert.equal(await text('#detail h2'), 'big.weight');
  const sampled = (await page.evaluate(() => window.kilnInspector.io.bytesRead - window.kilnInspector.openIo.bytesRead)) - 64;
  assert.ok(sampled <= SAMPLE + 4096, `the sample read ${sampled} bytes`);
  assert.match(await text('#stats-source'), /^A sample: 1,048,576 of 67,108,864 elements in 16 runs spread evenly over the tensor, 4\.00 MiB read of 256\.0 MiB\./);
  assert.equal(await text('#read-all'), 'Read all 256.0 MiB');
  assert.match(await text('#detail h3:has-text("Histogram")'), /of the sample/i);
  await shot('big-sample.png');
  // Watch the frame gaps while all of it is read.
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
  const b1 = await page.evaluate(() => window.kilnInspector.io.bytesRead);
  await page.click('#read-all');
  await page.waitForFunction(() => { const p = document.querySelector('#detail progress'); return p && p.value > 0.2; }, null, { timeout: 60_000 });
  await shot('big-progress.png');
  await statsDone();
  const gaps = await page.evaluate(() => { window.gaps.on = false; return window.gaps; });
  const all = (await page.evaluate(() => window.kilnInspector.io.bytesRead)) - b1;
  const stats = await text('#detail .stats');
  assert.match(stats, /NAN\s+1/);
  assert.match(stats, /INF\s+1/);
  assert.match(await text('#stats-source'), /^All 67,108,864 elements, 512\.0 MiB read \(the tensor twice: over 64 MiB is not kept for the histogram\)/);
  // 256 MiB is kept for the histogram's second pass up to 64 MiB: read twice.
  assert.ok(all >= 256 << 20 && all <= 2 * (256 << 20) + 4096, `all of it read ${all} bytes`);
  assert.ok(gaps.progress > 3, 'progress was shown while computing');
  assert.ok(await assertAxesApart() >= 2);
  console.log(`256 MiB: open ${openMs} ms, read ${facts.read} B; a sample ${sampled} B; all ${all} B, longest frame gap ${gaps.max.toFixed(0)} ms`);
  await shot('big.png');
  // Cancel: reading all of it again, stopped half way; nothing more is read after.
  await page.locator('#table-rows .row', { hasText: 'small' }).click();
  await statsDone();
  await page.locator('#table-rows .row', { hasText: 'big.weight' }).click();
  await statsDone();
  await page.click('#read-all');
  await page.waitForFunction(() => { const p = document.querySelector('#detail progress'); return p && p.value > 0.05; }, null, { timeout: 60_000 });
  await page.click('#cancel-stats');
  await page.waitForSelector('#detail[data-stats="cancelled"]', { timeout: 60_000 });
  assert.match(await text('#detail'), /Cancelled\./);
  const stopped = await page.evaluate(() => window.kilnInspector.io.bytesRead);
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => window.kilnInspector.io.bytesRead), stopped, 'no read after the cancel');
});

test('cancel stops an open and a tensor\'s reads: no request after it', async () => {
  const dir = path.join(big, 'latency');
  const gptOss = latencyFiles(dir).find((f) => f.file === 'gpt-oss-20b.gguf');
  served['/files/gpt-oss-20b.gguf'] = gptOss.path;
  served['/files/big.kiln'] = largeFile('big.kiln', '--big');
  server.setDelay(300);
  try {
    // The open of a 12 MiB GGUF head (three rounds of reads), cancelled after its first.
    const from = log.length;
    await page.goto(`${server.url}?url=/files/gpt-oss-20b.gguf`);
    await page.waitForFunction(() => document.body.dataset.state === 'loading');
    // Its second round of reads asked for (each answered 300 ms late): cancel.
    while (requestsFor('/files/gpt-oss-20b.gguf', from).length < 2) await page.waitForTimeout(10);
    await page.click('#busy-cancel');
    await page.waitForSelector('body[data-state="error"]', { timeout: 60_000 });
    assert.equal(await text('#error-code'), 'Aborted');
    // Once the page says so, nothing more is asked for.
    const atCancel = requestsFor('/files/gpt-oss-20b.gguf', from).length;
    await page.waitForTimeout(1500);
    const after = requestsFor('/files/gpt-oss-20b.gguf', from).length;
    assert.equal(after, atCancel, 'no request after the cancel');
    assert.ok(after < 9, `${after} requests of the open's 9`);
    // A tensor's whole read, by URL, cancelled: its requests stop too.
    server.setDelay(100);
    assert.equal(await openUrl('/files/big.kiln'), 'ready');
    await selectRow('big.weight');
    await page.click('#read-all');
    await page.waitForFunction(() => (document.querySelector('#detail progress')?.value ?? 0) > 0, null, { timeout: 60_000 });
    await page.click('#cancel-stats');
    await page.waitForSelector('#detail[data-stats="cancelled"]', { timeout: 60_000 });
    const n = requestsFor('/files/big.kiln').length;
    await page.waitForTimeout(1000);
    assert.equal(requestsFor('/files/big.kiln').length, n, 'no request after the cancel');
    assert.ok(server.stats.paths['/files/big.kiln'] < 64 << 20, `${server.stats.paths['/files/big.kiln']} bytes sent of 256 MiB`);
  } finally {
    server.setDelay(0);
    delete served['/files/gpt-oss-20b.gguf'];
    delete served['/files/big.kiln'];
  }
});

test('by URL, no probe: a Llama-shaped GGUF head in 1 request, its first read; full names at 1,280 px; a sampled tensor reads at most the sample', async () => {
  const dir = path.join(big, 'latency');
  const llama = latencyFiles(dir).find((f) => f.file === 'llama2-7b.gguf');
  served['/files/llama2-7b.gguf'] = llama.path;
  try {
    const from = log.length;
    assert.equal(await openUrl('/files/llama2-7b.gguf'), 'ready');
    const asked = requestsFor('/files/llama2-7b.gguf', from);
    assert.deepEqual(asked.map((r) => r.range), [`bytes=0-${FIRST_READ - 1}`], 'one request, the first read: no probe before it');
    assert.equal(await text('#count'), '291 tensors');
    assert.equal(await page.inputValue('#mode'), 'gguf', 'the selector shows the detected format');
    assert.match(await text('#header-facts'), /Format\s+GGUF/);
    // The dtype column shows the ggml type, the Quant column its bits per weight.
    const rows = await rowsText();
    const embd = rows.find((r) => r[0] === 'token_embd.weight');
    assert.equal(embd[1], 'Q4_K');
    assert.equal(embd.at(-1), '4.5 bpw');
    assert.ok(await assertNamesWhole('llama2-7b.gguf') > 10);
    await page.waitForSelector('#meta-box[data-meta="done"]');
    assert.match(await text('#meta'), /llama\.feed_forward_length u32\n11008/, 'a key whole, its value as text');
    await shot('url-llama2-7b-gguf.png');
  } finally {
    delete served['/files/llama2-7b.gguf'];
  }
});

test('a long metadata value is read in full on request: a 16,717-character chat template, 201,088 tokens', async () => {
  const dir = path.join(big, 'latency');
  const spec = latencyFiles(dir).find((f) => f.file === 'gpt-oss-20b.gguf');
  served['/files/gpt-oss-20b.gguf'] = spec.path;
  try {
    assert.equal(await openUrl('/files/gpt-oss-20b.gguf'), 'ready');
    await page.waitForSelector('#meta-box[data-meta="done"]', { timeout: 60_000 });
    const template = spec.metadata.find((m) => m.key === 'tokenizer.chat_template').value;
    assert.ok(template.length > 16_000);
    const entry = page.locator('#meta .meta-entry[data-key="tokenizer.chat_template"]');
    assert.equal((await entry.locator('.meta-value').innerText()).replace(/\u2026$/, '').replace(/\u21b5/g, '\n'), template.slice(0, 240), 'the first 240 characters, as text');
    assert.equal(await entry.locator('button.meta-more').innerText(), `Show all (${template.length.toLocaleString('en-US')} characters)`);
    await entry.locator('button.meta-more').click();
    await page.waitForSelector('#meta-dialog[open]');
    assert.equal(await page.locator('#meta-full').innerText(), template, 'the whole value');
    await shot('metadata-full.png');
    await page.click('#meta-dialog button');
    // Keys are never broken inside a word, only after a dot.
    const keys = await page.$$eval('#meta .meta-key .key', (ks) => ks.map((k) => {
      const range = document.createRange();
      range.selectNodeContents(k);
      const lines = [...new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)))].length;
      return { text: k.innerText, lines };
    }));
    for (const k of keys) if (k.lines > 1) assert.ok(k.text.includes('.'), `${k.text} broken in ${k.lines} lines`);
    const tokens = page.locator('#meta .meta-entry[data-key="tokenizer.ggml.tokens"]');
    assert.equal(await tokens.locator('button.meta-more').innerText(), 'Show all (201,088 items)');
  } finally {
    delete served['/files/gpt-oss-20b.gguf'];
  }
});

/** The 6 GiB sparse file (real heads, zero payloads): written by the samples example, deleted after the test. */
test('6 GiB, sparse: the table, a tensor at the end with its values, bytes read and memory bounded', async () => {
  const file = path.join(big, 'sparse-6g.kiln');
  const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-wasm', '--example', 'make_samples', '--', '--sparse', file], { cwd: root, stdio: 'inherit' });
  assert.equal(r.status, 0, 'writing the sparse file');
  try {
    const size = fs.statSync(file).size;
    assert.ok(size >= 6 * 2 ** 30, `${size} bytes`);
    const openMs = await openTimed(file);
    assert.equal(await text('#count'), '302 tensors');
    const open = await page.evaluate(() => {
      const s = window.kilnInspector;
      return { io: s.openIo, heads: s.dirs.reduce((a, d) => a + d.payload_offset - d.offset, 0), checkMs: s.checkMs };
    });
    // The open reads the directory's head and nothing of the payloads
    // (its first read, 2 MiB, holds the head).
    assert.ok(open.io.bytesRead <= Math.max(FIRST_READ, open.heads + (64 << 10)), `read ${open.io.bytesRead}, heads ${open.heads}`);
    assert.ok(open.io.wasmMemory <= (64 << 20) + open.heads, `wasm memory ${open.io.wasmMemory}`);
    await statsDone();
    assert.ok(await assertNamesWhole('sparse-6g.kiln') > 10);
    await shot('sparse-6g.png');
    // The last tensor, 6 GiB into the file: its values.
    const before = await page.evaluate(() => window.kilnInspector.io.bytesRead);
    const t0 = Date.now();
    await selectRow('model.norm.weight');
    const normMs = Date.now() - t0;
    assert.match(await text('#detail .values'), /^-8\s+-7\.99609\s+-7\.99219/);
    assert.match(await text('#detail'), /6,60\d,\d{3},\d{3}/);
    const stats = await text('#detail .stats');
    assert.match(stats, /MIN\s+-8/);
    assert.match(stats, /MAX\s+7\.99609/);
    const norm = await page.evaluate(() => window.kilnInspector.tensors.at(-1).bytes);
    const after = await page.evaluate(() => window.kilnInspector.io);
    // The tensor's bytes (the first values once more, then one pass: a
    // tensor under 64 MiB is kept for the histogram).
    assert.ok(after.bytesRead - before <= 2 * norm + 4096, `read ${after.bytesRead - before} for ${norm}`);
    assert.ok(after.wasmMemory <= (64 << 20) + open.heads, `wasm memory ${after.wasmMemory}`);
    await shot('sparse-6g-end.png');
    // A 21 MiB f16 matrix near the end: a sample of it, the heatmap's rows from the sample.
    const b2 = after.bytesRead;
    const t1 = Date.now();
    await selectRow('model.layers.49.down_proj.weight');
    const matMs = Date.now() - t1;
    const io2 = await page.evaluate(() => window.kilnInspector.io);
    // (The first values once more, then the sample.)
    assert.ok(io2.bytesRead - b2 <= SAMPLE + 4096, `read ${io2.bytesRead - b2}`);
    assert.match(await text('#detail .stats'), /MIN\s+0\s+MAX\s+0/);
    assert.match(await text('#stats-source'), /^A sample: /);
    assert.equal(await text('#read-all'), 'Read all 21.0 MiB');
    assert.match(await text('#detail'), /Rows from the sample: 256 of 4,096\./);
    await shot('sparse-6g-matrix.png');
    // A 1 M-element matrix: the time to its histogram.
    const b3 = io2.bytesRead;
    const t2 = Date.now();
    await selectRow('lm_head.weight');
    const megaMs = Date.now() - t2;
    const mega = (await page.evaluate(() => window.kilnInspector.io.bytesRead)) - b3;
    assert.ok(mega <= (2 << 20) + 4096, `read ${mega} for a 2 MiB tensor`);
    console.log(`6 GiB sparse (${size} B, 302 tensors): open to table ${openMs} ms (check ${open.checkMs.toFixed(0)} ms), read ${open.io.bytesRead} B in ${open.io.requests} reads, wasm memory ${open.io.wasmMemory} B; ` +
      `4,096-element tensor at the end ${normMs} ms; a sample of an 11 M-element f16 matrix ${matMs} ms, ${io2.bytesRead - b2} B read`);
    console.log('speed (this run; goals from the issue; the peers open no such file with values):');
    console.log(`  6 GiB file picked to full table     ${String(openMs).padStart(6)} ms  goal < 300 ms  read ${open.io.bytesRead} B  (Netron: no file over 2 GB; hub viewers: header only, no values)`);
    console.log(`  1 M-element tensor to its histogram ${String(megaMs).padStart(6)} ms  goal < 500 ms  read ${mega} B`);

    // The same file from a URL: HTTP Range requests to the test server,
    // which counts the bytes it sends and logs each request.
    served['/files/sparse-6g.kiln'] = file;
    const sentOf = () => server.stats.paths['/files/sparse-6g.kiln'] ?? 0;
    const from = log.length;
    const u0 = Date.now();
    await page.goto(`${server.url}?url=/files/sparse-6g.kiln&name=sparse-6g.kiln`);
    await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120_000 });
    const urlMs = Date.now() - u0;
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
    assert.equal(await text('#count'), '302 tensors');
    // No probe: the first request is the first read, whose answer says the
    // length; it holds the head.
    const asked = requestsFor('/files/sparse-6g.kiln', from);
    assert.deepEqual(asked.map((r) => r.range), [`bytes=0-${FIRST_READ - 1}`], 'the open: one request');
    const sentOpen = sentOf();
    assert.ok(sentOpen <= FIRST_READ, `sent ${sentOpen} B for the open (heads ${open.heads})`);
    await shot('url-6g.png');
    const sent1 = sentOf();
    await selectRow('model.norm.weight');
    assert.match(await text('#detail .values'), /^-8\s+-7\.99609/);
    const sentTensor = sentOf() - sent1;
    assert.ok(sentTensor >= norm && sentTensor <= 2 * norm + 1024, `sent ${sentTensor} B for a tensor of ${norm}`);
    // A 21 MiB matrix by URL: its sample, at most SAMPLE bytes in the sample's runs, sent together.
    const sent2 = sentOf(), from2 = log.length;
    await selectRow('model.layers.49.down_proj.weight');
    const sentSample = sentOf() - sent2;
    const sampleRequests = requestsFor('/files/sparse-6g.kiln', from2).length;
    assert.ok(sentSample <= SAMPLE + 4096, `sent ${sentSample} B for a sample`);
    assert.ok(sampleRequests <= 17, `${sampleRequests} requests for the first values and a sample of 16 runs`);
    console.log(`6 GiB by URL: open to table ${urlMs} ms, ${sentOpen} B sent for the open in ${asked.length} request; one 16 KiB tensor: ${sentTensor} B sent; a sample of a 21 MiB tensor: ${sentSample} B in ${sampleRequests} requests`);
    await shot('url-6g-tensor.png');
  } finally {
    delete served['/files/sparse-6g.kiln'];
    fs.rmSync(file, { force: true });
  }
});

/** The same 6 GiB model as a safetensors and as a GGUF file (real heads, zero payloads, a real last tensor): each opened from its head alone, through kiln-convert's readers in the inspector's module. */
for (const { format, ext, count } of [
  { format: 'safetensors', ext: 'safetensors', count: 302 },
  { format: 'GGUF', ext: 'gguf', count: 304 },
]) {
  test(`6 GiB ${format}, sparse: the table from the head alone, a tensor at the end with its values, bytes read and memory bounded`, async () => {
    const file = path.join(big, `sparse-6g.${ext}`);
    const r = spawnSync('cargo', ['run', '-q', '-p', 'kiln-wasm', '--example', 'make_samples', '--', `--sparse-${ext}`, file], { cwd: root, stdio: 'inherit' });
    assert.equal(r.status, 0, 'writing the sparse file');
    try {
      const size = fs.statSync(file).size;
      assert.ok(size >= 6 * 2 ** 30, `${size} bytes`);
      const openMs = await openTimed(file);
      assert.equal(await text('#count'), `${count} tensors`);
      const open = await page.evaluate(() => {
        const s = window.kilnInspector;
        return { io: s.openIo, head: s.dirs[0].payload_offset, checkMs: s.checkMs, format: s.file.header.format };
      });
      assert.equal(open.format, ext);
      assert.equal(await page.inputValue('#mode'), ext, 'the selector shows the detected format');
      // The head alone: the first read (2 MiB) holds it (a 745 KiB GGUF
      // head of a 32,000-token vocabulary, too); a longer head is read on.
      assert.ok(open.io.bytesRead <= Math.max(FIRST_READ, 4 * open.head), `read ${open.io.bytesRead}, head ${open.head}`);
      assert.ok(open.io.bytesRead >= open.head, `read ${open.io.bytesRead}, head ${open.head}`);
      await page.waitForSelector('#meta-box[data-meta="done"]');
      const meta = await page.evaluate(() => Array.from(document.querySelectorAll('#meta .meta-entry'), (e) => e.innerText));
      if (ext === 'gguf') {
        assert.ok(open.head > 256 << 10 && open.io.requests === 1, `head ${open.head} in ${open.io.requests} reads`);
        const tokens = meta.find((m) => m.startsWith('tokenizer.ggml.tokens '));
        assert.match(tokens, /^tokenizer\.ggml\.tokens list<str>\n\["\u2581token0", "\u2581token1", .*\u2026\nShow all \(32,000 items\)$/s);
        assert.ok(meta.includes('general.architecture str\nllama'), meta.join('\n--\n'));
        // A quantized tensor's dtype is its ggml type, its Quant its bits per weight.
        await page.fill('#filter', 'blk.q4_k.weight');
        const q = (await rowsText())[0];
        assert.deepEqual([q[0], q[1], q.at(-1)], ['blk.q4_k.weight', 'Q4_K', '4.5 bpw']);
        await page.fill('#filter', '');
      } else {
        assert.ok(meta.includes('format str\npt'), meta.join('\n--\n'));
      }
      assert.ok(open.io.wasmMemory <= (64 << 20) + open.head, `wasm memory ${open.io.wasmMemory}`);
      assert.match(await text('#header-facts'), new RegExp(`Format\\s+${format}`));
      await statsDone();
      assert.ok(await assertNamesWhole(`sparse-6g.${ext}`) > 10);
      await shot(`sparse-6g-${ext}.png`);
      // The last tensor, 6 GiB into the file: its values and statistics.
      const before = await page.evaluate(() => window.kilnInspector.io.bytesRead);
      const t0 = Date.now();
      await selectRow('model.norm.weight');
      const normMs = Date.now() - t0;
      assert.match(await text('#detail .values'), /^-8\s+-7\.99609\s+-7\.99219/);
      assert.match(await text('#detail'), /6,6\d\d,\d{3},\d{3}/);
      const stats = await text('#detail .stats');
      assert.match(stats, /MIN\s+-8/);
      assert.match(stats, /MAX\s+7\.99609/);
      const norm = await page.evaluate(() => JSON.parse(JSON.stringify(window.kilnInspector.tensors.find((t) => t.name === 'model.norm.weight'))));
      assert.equal(norm.offset + norm.bytes, size);
      const after = await page.evaluate(() => window.kilnInspector.io);
      assert.ok(after.bytesRead - before <= 2 * norm.bytes + 4096, `read ${after.bytesRead - before} for ${norm.bytes}`);
      assert.ok(after.wasmMemory <= (64 << 20) + open.head, `wasm memory ${after.wasmMemory}`);
      await shot(`sparse-6g-${ext}-end.png`);
      // A 1 M-element f16 matrix: the time to its histogram.
      const b3 = after.bytesRead;
      const t2 = Date.now();
      await selectRow('lm_head.weight');
      const megaMs = Date.now() - t2;
      const mega = (await page.evaluate(() => window.kilnInspector.io.bytesRead)) - b3;
      assert.ok(mega <= (2 << 20) + 4096, `read ${mega} for a 2 MiB tensor`);
      assert.match(await text('#detail .stats'), /MIN\s+0\s+MAX\s+0/);
      if (ext === 'gguf') {
        // Quantized blocks: their layout, and their bytes.
        await selectRow('blk.q8_0.weight');
        assert.match(await text('#detail'), /Layout\s+Q8_0, block 34 B, 8 blocks/);
        assert.match(await text('#detail .values'), /^00\s+3c\s+f0\s+f1\s+f2/);
        await shot('sparse-6g-gguf-q8_0.png');
        await selectRow('blk.q4_k.weight');
        assert.match(await text('#detail'), /Layout\s+Q4_K, block 144 B, 8,192 blocks/);
        assert.match(await text('#detail'), /Shape\s+\[512, 4096\]/);
      }
      console.log(`6 GiB ${format} sparse (${size} B, ${count} tensors): open to table ${openMs} ms (head read and checked ${open.checkMs.toFixed(0)} ms), ` +
        `head ${open.head} B, read ${open.io.bytesRead} B in ${open.io.requests} reads, wasm memory ${open.io.wasmMemory} B; 4,096-element tensor at the end ${normMs} ms`);
      console.log(`speed: 6 GiB ${format} file picked to full table ${openMs} ms (goal < 300 ms), read ${open.io.bytesRead} B; 1 M-element tensor to its histogram ${megaMs} ms (goal < 500 ms), read ${mega} B`);

      // One byte too many at the end (64 here): a fault the head alone
      // shows, at its offset 6 GiB into the file.
      fs.truncateSync(file, size + 64);
      assert.equal(await open_(file), 'error');
      assert.equal(await text('#error-code'), format);
      const at = ext === 'gguf' ? size : open.head;
      assert.ok((await text('#error-where')).includes(`byte ${at.toLocaleString('en-US')}`), await text('#error-where'));
      assert.match(await text('#error h2'), new RegExp(`Not a valid ${format} file`));
      assert.match(await text('#error-message'), ext === 'gguf' ? /64 bytes after the end of the last tensor/ : /data_offsets do not end at the end of the file/);
      // The hex view is of the bytes there, the fault's byte marked.
      assert.equal(await page.locator('#hex .hit').count(), 1);
      const first = Number.parseInt(await page.locator('#hex .off').first().innerText(), 16);
      assert.ok(first <= at && at - first <= 256, `hex view from ${first} for a fault at ${at}`);
      await shot(`sparse-6g-${ext}-corrupt.png`);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
}

test('small safetensors and GGUF files: the samples open; corrupt ones show the fault, its offset and the bytes there', async () => {
  for (const [name, n] of [['tiny.safetensors', null], ['tiny.gguf', null]]) {
    assert.equal(await open_(path.join(samples, name)), 'ready', name);
    assert.ok(Number((await text('#count')).split(' ')[0]) > 0);
    await statsDone();
    await shot(`${name.replace('.', '-')}.png`);
  }
  const dir = fs.mkdtempSync(path.join(big, 'corrupt-'));
  try {
    // GGUF version 7: refused at byte 4.
    const gguf = fs.readFileSync(path.join(samples, 'tiny.gguf'));
    gguf[4] = 7;
    fs.writeFileSync(path.join(dir, 'bad-version.gguf'), gguf);
    assert.equal(await open_(path.join(dir, 'bad-version.gguf')), 'error');
    assert.equal(await text('#error-code'), 'GGUF');
    assert.match(await text('#error-message'), /unknown GGUF version 7/);
    assert.ok((await text('#error-where')).includes('byte 4 (0x4)'));
    assert.equal(await text('#hex .hit'), '07');
    await shot('corrupt-gguf.png');
    // A safetensors header whose JSON breaks off: the offset of the fault
    // in the header.
    const json = '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}';
    const st = Buffer.concat([Buffer.from(new BigUint64Array([BigInt(json.length)]).buffer), Buffer.from(json), Buffer.alloc(4)]);
    fs.writeFileSync(path.join(dir, 'cut.safetensors'), st);
    assert.equal(await open_(path.join(dir, 'cut.safetensors')), 'error');
    assert.equal(await text('#error-code'), 'safetensors');
    assert.match(await text('#error-message'), /not a safetensors header/);
    assert.ok((await text('#error-where')).includes(`byte ${8 + 52}`), await text('#error-where'));
    await shot('corrupt-safetensors.png');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs `node www/serve.mjs --open FILE [--type TYPE]` (what `bash scripts/www.sh FILE [TYPE]` runs) on a free port: the lines it prints once it serves, and its process. */
async function serveOpen(file, type) {
  const child = spawn(process.execPath, [path.join(root, 'www/serve.mjs'), '--port', '0', '--open', file, ...(type ? ['--type', type] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => { out += d; if (/Kiln inspector: http/.test(out)) resolve(); });
    child.on('exit', (code) => reject(new Error(`serve.mjs exited ${code}: ${out}`)));
  });
  return { child, out, url: /Kiln inspector: (\S+)/.exec(out)[1] };
}

test('bash scripts/www.sh FILE: the URL it prints names no mode and no type, and opens a converted model as its bytes say', async () => {
  const { child, url } = await serveOpen(path.join(samples, 'tiny-gguf.kiln'));
  try {
    assert.doesNotMatch(url, /[?&](mode|type)=/, url);
    await page.goto(url);
    await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 60_000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await text('#error'));
    assert.equal(await page.inputValue('#mode'), 'converted-gguf');
    assert.equal(await text('#count'), '3 tensors');
  } finally {
    child.kill();
  }
  // A message of a type the inspector does not know: the script says how to give it, and the URL then carries it.
  const manifest = JSON.parse(fs.readFileSync(path.join(samples, 'samples.json'), 'utf8'));
  const record = manifest.find((x) => x.file === 'record.kiln');
  const alone = await serveOpen(path.join(samples, 'record.kiln'));
  alone.child.kill();
  assert.match(alone.out, /does not open as its bytes say .*\n.*bash scripts\/www\.sh .*record\.kiln 'TYPE TEXT'/);
  const typed = await serveOpen(path.join(samples, 'record.kiln'), record.type);
  try {
    assert.match(typed.url, /&type=/);
    await page.goto(typed.url);
    await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
    assert.equal(await page.inputValue('#mode'), 'framed');
  } finally {
    typed.child.kill();
  }
});

test('URL: a server without Range support, and a CORS refusal, get a clear message', async () => {
  await page.goto(`${server.url}?url=/norange/samples/model.kiln&name=model.kiln`);
  await page.waitForSelector('body[data-state="error"]', { timeout: 60_000 });
  assert.equal(await text('#error-code'), 'NoRange');
  assert.match(await text('#error-message'), /supports HTTP Range requests/);
  await shot('url-norange.png');
  // Another origin (another port) that sends no CORS headers.
  const other = await startServer();
  const before = errors.length;
  try {
    await page.fill('#url-input', `${other.url}samples/model.kiln`);
    await page.click('#open-url');
    await page.waitForSelector('body[data-state="error"] #error-code:text("Network")', { timeout: 60_000 });
    assert.match(await text('#error-message'), /CORS/);
    await shot('url-cors.png');
  } finally {
    await other.close();
  }
  // Chromium logs the refused request itself: expected here.
  const logged = errors.splice(before);
  assert.ok(logged.every((m) => /CORS|Failed to load resource|Failed to fetch/i.test(m)), logged.join('\n'));
  // With CORS allowed, the other origin's file opens.
  const open = await startServer({ cors: true });
  try {
    await page.fill('#url-input', `${open.url}samples/model.kiln`);
    await page.click('#open-url');
    await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
    assert.equal(await text('#count'), '19 tensors');
  } finally {
    await open.close();
  }
  // A sample opened next is not shown under the last URL.
  assert.notEqual(await page.inputValue('#url-input'), '');
  await page.selectOption('#sample-select', 'model.kiln');
  await page.waitForFunction(() => document.querySelector('#url-input').value === '', null, { timeout: 60_000 });
});

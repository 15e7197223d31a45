// A static server for www/ on 127.0.0.1, for scripts/www.sh and the
// end-to-end tests (which import startServer and stop it themselves).
//
//   node www/serve.mjs [--port N] [--open FILE [--type TYPE]]
//
// With --open, FILE is served at /open/<name> and the printed URL opens it
// (as its bytes say; with --type, read as that type).
//
// Files are served with HTTP Range requests (206, one range), which the
// inspector's ?url= reads a remote file by; `stats.sent` counts the bytes
// sent, `stats.paths` by URL path (the tests assert on them). Paths under /norange/ are the same files
// served as a server without Range support would (200, the whole file).
// With `cors`, any origin may read (what a file host must allow for the
// inspector on another origin); without it, none but this one.
//
// With `delayMs`, every request is answered that many milliseconds late
// (a far host's round trip; `setDelay(ms)` changes it between runs).
// `stats.requests` counts the requests answered, and `stats.log`, when
// the caller gives one, lists each as it arrives (its path and Range
// header); `stats`,
// when given, is the object to count into (tests/e2e/server-thread.mjs
// passes counters in shared memory). Each file is sent with an ETag (its size and time), which
// @huggingface/hub's downloads require.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WWW = path.dirname(fileURLToPath(import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.ts': 'text/plain; charset=utf-8',
};

/** Serves `root` (and `extra` files by URL path) on 127.0.0.1; resolves to { url, close, stats, setDelay }. */
export function startServer({ root = WWW, port = 0, extra = {}, cors = false, delayMs = 0, stats = { sent: 0, requests: 0, paths: {} } } = {}) {
  let delay = delayMs;
  const server = http.createServer((req, res) => {
    // Logged when it arrives, before any delay: what the client asked for.
    stats.log?.push({ path: new URL(req.url, 'http://127.0.0.1').pathname, range: req.headers.range ?? null });
    if (delay > 0) setTimeout(answer, delay, req, res);
    else answer(req, res);
  });
  function answer(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    const corsHeaders = cors ? {
      'access-control-allow-origin': '*', 'access-control-allow-headers': 'range',
      'access-control-expose-headers': 'content-range, content-length, accept-ranges',
    } : {};
    if (req.method === 'OPTIONS') { res.writeHead(204, corsHeaders).end(); return; }
    stats.requests++;
    const noRange = url.pathname.startsWith('/norange/');
    const pathname = noRange ? url.pathname.slice('/norange'.length) : url.pathname;
    let file = extra[pathname];
    if (!file) {
      const rel = path.normalize(decodeURIComponent(pathname)).replace(/^(\.\.[/\\])+/, '');
      file = path.join(root, rel === '/' ? 'index.html' : rel);
      if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
      const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      const m = noRange ? null : /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0, end = st.size - 1, status = 200;
      const headers = { 'content-type': type, 'cache-control': 'no-store', etag: `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`, ...corsHeaders };
      if (!noRange) headers['accept-ranges'] = 'bytes';
      if (m) {
        start = Number(m[1]);
        end = m[2] ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
        if (start >= st.size || end < start) {
          res.writeHead(416, { 'content-range': `bytes */${st.size}`, ...corsHeaders }).end();
          return;
        }
        status = 206;
        headers['content-range'] = `bytes ${start}-${end}/${st.size}`;
      }
      headers['content-length'] = end - start + 1;
      res.writeHead(status, headers);
      if (req.method === 'HEAD' || st.size === 0) { res.end(); return; }
      const stream = fs.createReadStream(file, { start, end });
      stream.on('data', (chunk) => { stats.sent += chunk.length; stats.paths[url.pathname] = (stats.paths[url.pathname] ?? 0) + chunk.length; });
      res.on('close', () => stream.destroy());
      stream.pipe(res);
    });
  }
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${server.address().port}/`;
    const setDelay = (ms) => { delay = ms; };
    resolve({ url, server, stats, setDelay, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) });
  }));
}

/**
 * Whether the inspector module opens `file` as its bytes say (no type
 * given): a message of a type it does not know needs its type text. Null
 * when the module is not built.
 */
async function opensAlone(file) {
  const module = path.join(WWW, 'inspect/kiln_inspect.js');
  if (!fs.existsSync(module)) return null;
  const { initSync, openFile } = await import(module);
  initSync({ module: fs.readFileSync(path.join(WWW, 'inspect/kiln_inspect_bg.wasm')) });
  const fd = fs.openSync(file, 'r');
  try {
    const read = (at, len) => { const b = new Uint8Array(len); fs.readSync(fd, b, 0, len, at); return b; };
    const opened = await openFile(fs.fstatSync(fd).size, read, { name: path.basename(file) });
    opened.free();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e };
  } finally {
    fs.closeSync(fd);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const open = opt('--open');
  const extra = {};
  let query = '?sample=model.kiln';
  if (open) {
    const file = path.resolve(open);
    const name = path.basename(file);
    extra[`/open/${encodeURIComponent(name)}`] = file;
    const type = opt('--type');
    // The page reads the file as its bytes say: the URL names a type only when one was given.
    query = `?url=/open/${encodeURIComponent(name)}&name=${encodeURIComponent(name)}${type ? `&type=${encodeURIComponent(type)}` : ''}`;
    const alone = type ? null : await opensAlone(file);
    if (alone && !alone.ok) {
      console.log(`${name} does not open as its bytes say (${alone.error.message});`);
      console.log(`a message of a type the inspector does not know needs it: bash scripts/www.sh ${open} 'TYPE TEXT'`);
    }
  }
  const { url } = await startServer({ port: Number(opt('--port') ?? 8417), extra });
  console.log(`Kiln inspector: ${url}${query}`);
  console.log(`(serving ${WWW} on 127.0.0.1 only; Ctrl-C stops it)`);
}

// A static server for www/ on 127.0.0.1, for scripts/www.sh and the
// end-to-end tests (which import startServer and stop it themselves).
//
//   node www/serve.mjs [--port N] [--open FILE [--type TYPE]]
//
// With --open, FILE is served at /open/<name> and the printed URL opens it.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WWW = path.dirname(fileURLToPath(import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.ts': 'text/plain; charset=utf-8',
};

/** Serves `root` (and `extra` files by URL path) on 127.0.0.1; resolves to { url, close }. */
export function startServer({ root = WWW, port = 0, extra = {} } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let file = extra[url.pathname];
    if (!file) {
      const rel = path.normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, '');
      file = path.join(root, rel === '/' ? 'index.html' : rel);
      if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'content-length': st.size, 'cache-control': 'no-store',
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${server.address().port}/`;
    resolve({ url, server, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) });
  }));
}

function modeOf(file) {
  const fd = fs.openSync(file, 'r');
  const magic = Buffer.alloc(4);
  fs.readSync(fd, magic, 0, 4, 0);
  fs.closeSync(fd);
  return { KLNT: 'directory', KLN0: 'framed' }[magic.toString('latin1')] ?? 'plain';
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
    const mode = type && modeOf(file) === 'directory' ? 'plain' : modeOf(file);
    query = `?url=/open/${encodeURIComponent(name)}&name=${encodeURIComponent(name)}&mode=${mode}${type ? `&type=${encodeURIComponent(type)}` : ''}`;
  }
  const { url } = await startServer({ port: Number(opt('--port') ?? 8417), extra });
  console.log(`Kiln inspector: ${url}${query}`);
  console.log(`(serving ${WWW} on 127.0.0.1 only; Ctrl-C stops it)`);
}

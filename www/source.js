// Where a file's bytes come from: a File (or any Blob) or a URL served
// with HTTP Range requests. Each source is `{ name, length, read(offset,
// length, signal) }`, `read` resolving to a Uint8Array of exactly those
// bytes, and counts what it read (`reads`: bytes and requests). The
// inspector's openFile drives its reads through `read`: nothing here
// knows a format.

/** A read that could not be made: `code` is NoRange, Network, Http or Aborted. */
export class SourceError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'KilnError';
    this.code = code;
    this.fault = message;
  }
}

const aborted = () => new SourceError('Aborted', 'the read was cancelled');

/**
 * A File or Blob, read by `slice()`: `name` is the file's name (a Blob
 * has none unless given); `reads`, the counter to add each read to.
 * @param {Blob} blob
 * @param {{ name?: string, reads?: { bytes: number, requests: number } }} [options]
 */
export function fileSource(blob, { name = blob.name ?? '', reads = { bytes: 0, requests: 0 } } = {}) {
  return {
    name, length: blob.size, reads,
    async read(offset, length, signal) {
      if (signal?.aborted) throw aborted();
      const bytes = new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
      reads.bytes += bytes.length; reads.requests += 1;
      return bytes;
    },
  };
}

const networkError = (url) => new SourceError('Network', `${url} could not be fetched: the server is unreachable, or it does not allow this page to read it (CORS: it must send Access-Control-Allow-Origin, allow the Range request header and expose Content-Range).`);

/** One Range request: the response (206, or 416 when `empty` may be), or a SourceError that says why not. */
async function rangeRequest(url, offset, length, signal, empty = false) {
  let r;
  try {
    r = await fetch(url, { headers: { Range: `bytes=${offset}-${offset + length - 1}` }, cache: 'no-store', signal });
  } catch (e) {
    if (signal?.aborted) throw aborted();
    throw networkError(url);
  }
  if (r.status === 206 || (empty && r.status === 416)) return r;
  r.body?.cancel().catch(() => {});
  if (r.status === 200) throw new SourceError('NoRange', `${url}: the server ignored the Range request (it began sending the whole file, status 200). Opening a file from a URL needs a server that supports HTTP Range requests.`);
  throw new SourceError('Http', `${url}: the server answered ${r.status} ${r.statusText} to a Range request for bytes ${offset} to ${offset + length - 1}.`);
}

/**
 * A response's bytes. With `onStart`, read as they arrive: `onStart` gets
 * the first 64 (or more) once they are there, while the rest still comes.
 */
async function body(r, url, signal, onStart = null) {
  try {
    if (!onStart || !r.body) return new Uint8Array(await r.arrayBuffer());
    const reader = r.body.getReader();
    const chunks = [];
    let size = 0, told = false;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (!told && size >= 64) {
        told = true;
        onStart(chunks.length === 1 ? value : joined(chunks, size));
      }
    }
    return chunks.length === 1 ? chunks[0] : joined(chunks, size);
  } catch {
    if (signal?.aborted) throw aborted();
    throw networkError(url);
  }
}

function joined(chunks, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/**
 * A URL read by HTTP Range requests. The first request is the file's
 * first read (bytes 0 to `first` - 1: the inspector module's
 * `firstRead()`, what its opener reads first): its Content-Range gives
 * the length, and its bytes are kept (`head`), so that a read within them
 * (the opener's first) sends nothing. No other probe is sent. `after`
 * (the inspector module's `readsAfterFirst`) says, from the first bytes
 * of that answer, which reads the opener will ask for next: they are
 * requested while the rest of the first answer still arrives, and a read
 * within one of them waits for it. `signal` stops the first request and
 * those; each later read takes its own.
 * @param {string} url
 * @param {{ signal?: AbortSignal, name?: string, first?: number, reads?: { bytes: number, requests: number }, after?: (start: Uint8Array, length: number) => [number, number][] }} [options]
 */
export async function urlSource(url, { signal, name = url.split('/').pop() || url, first = 2 << 20, reads = { bytes: 0, requests: 0 }, after = null } = {}) {
  let head = new Uint8Array(0), length;
  /** Reads started ahead: { offset, length, bytes (a promise) }. */
  const ahead = [];
  const fetchRange = async (offset, len, sig) => {
    const bytes = await body(await rangeRequest(url, offset, len, sig), url, sig);
    reads.bytes += bytes.length; reads.requests += 1;
    if (bytes.length !== len) throw new SourceError('Http', `${url}: the server sent ${bytes.length} bytes for a Range request of ${len} at byte ${offset}.`);
    return bytes;
  };
  const startAhead = (start) => {
    let planned = [];
    try { planned = after(start, length); } catch { /* a hint only: the opener reads what it needs */ }
    for (const [offset, len] of planned) {
      const bytes = fetchRange(offset, len, signal);
      bytes.catch(() => {}); // a read ahead nobody waits for fails quietly; one waited for throws there
      ahead.push({ offset, length: len, bytes });
    }
  };
  // An empty file has no byte 0: the server says 416 and its length, 0.
  const r = await rangeRequest(url, 0, first, signal, true);
  if (r.status === 416) r.body?.cancel().catch(() => {});
  if (r.status === 416 && /^bytes \*\/0$/.test(r.headers.get('Content-Range') ?? '')) length = 0;
  else if (r.status === 416) throw new SourceError('Http', `${url}: the server answered 416 (range not satisfiable) to a Range request for its first bytes.`);
  else {
    const total = /^bytes \d+-\d+\/(\d+)$/.exec(r.headers.get('Content-Range') ?? '');
    if (!total) {
      r.body?.cancel().catch(() => {});
      throw new SourceError('NoRange', `${url}: the server's Range answer has no total length (Content-Range is missing, or not exposed to this page by CORS: Access-Control-Expose-Headers).`);
    }
    length = Number(total[1]);
    head = await body(r, url, signal, after && startAhead);
    reads.bytes += head.length; reads.requests += 1;
  }
  return {
    name, length, reads, head,
    async read(offset, len, sig) {
      if (sig?.aborted) throw aborted();
      if (offset + len <= head.length) return head.subarray(offset, offset + len);
      const a = ahead.find((x) => offset >= x.offset && offset + len <= x.offset + x.length);
      if (a) return (await a.bytes).subarray(offset - a.offset, offset - a.offset + len);
      return fetchRange(offset, len, sig);
    },
  };
}

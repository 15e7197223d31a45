// www/serve.mjs in a worker thread of its own: a far host's server does
// not share the client's thread, so the client's own work (a parse in
// wasm, JSON.parse) never delays the answers it waits for. The requests
// and bytes are counted into shared memory, read here as
// `stats.requests` and `stats.sent`.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** Starts the server in a worker; resolves to { url, stats, setDelay(ms) (awaitable), close() }. */
export function startServerThread(options = {}) {
  const counts = new BigInt64Array(new SharedArrayBuffer(16));
  const worker = new Worker(new URL(import.meta.url), { workerData: { options, counts } });
  const replies = [];
  worker.on('message', (m) => replies.shift()?.(m));
  const ask = (m) => new Promise((resolve) => { replies.push(resolve); worker.postMessage(m); });
  const stats = {
    get requests() { return Number(Atomics.load(counts, 0)); },
    get sent() { return Number(Atomics.load(counts, 1)); },
  };
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    replies.push(({ url }) => resolve({
      url, stats,
      setDelay: (ms) => ask({ delay: ms }),
      close: async () => { await ask({ close: true }); await worker.terminate(); },
    }));
  });
}

if (!isMainThread && workerData?.counts) {
  const { startServer } = await import('../../www/serve.mjs');
  const { options, counts } = workerData;
  const stats = {
    paths: {},
    get requests() { return Number(Atomics.load(counts, 0)); },
    set requests(v) { Atomics.store(counts, 0, BigInt(v)); },
    get sent() { return Number(Atomics.load(counts, 1)); },
    set sent(v) { Atomics.store(counts, 1, BigInt(v)); },
  };
  const server = await startServer({ ...options, stats });
  parentPort.on('message', async (m) => {
    if (m.delay !== undefined) server.setDelay(m.delay);
    if (m.close) await server.close();
    parentPort.postMessage({ done: true });
  });
  parentPort.postMessage({ url: server.url });
}

// A synchronous HTTP Range read in node, for today's inspector module,
// whose openModel(size, read, format) calls read(offset, length) and needs
// the bytes before it returns (as the page's worker does with a
// synchronous XMLHttpRequest). A worker thread does the fetch; the caller
// blocks on Atomics.wait until the worker has posted the bytes, then takes
// them with receiveMessageOnPort. The cost over a plain fetch is a message
// each way (well under a millisecond).
import { Worker, MessageChannel, receiveMessageOnPort, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** `get(url, at, len)`: the bytes at..at+len of url and its total length ({ bytes, total }), synchronously; `close()` ends the worker. */
export function syncRangeReader() {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL(import.meta.url), { workerData: { flag, port: port2 }, transferList: [port2] });
  worker.unref();
  const get = (url, at, len) => {
    Atomics.store(flag, 0, 0);
    worker.postMessage({ url, at, len });
    Atomics.wait(flag, 0, 0);
    const { message } = receiveMessageOnPort(port1);
    if (message.error) throw Object.assign(new Error(message.error), { code: 'Io' });
    return message;
  };
  return {
    get,
    close: () => worker.terminate(),
  };
}

if (!isMainThread && workerData?.flag) {
  const { flag, port } = workerData;
  parentPort.on('message', async ({ url, at, len }) => {
    let reply;
    try {
      const r = await fetch(url, { headers: { Range: `bytes=${at}-${at + len - 1}` } });
      if (r.status !== 206) throw new Error(`${url}: status ${r.status} to a Range request`);
      const total = Number(/\/(\d+)$/.exec(r.headers.get('content-range') ?? '')?.[1]);
      const bytes = new Uint8Array(await r.arrayBuffer());
      reply = { bytes, total };
      port.postMessage(reply, [bytes.buffer]);
    } catch (e) {
      port.postMessage({ error: e.message });
    }
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
}

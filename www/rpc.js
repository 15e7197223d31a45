// The page's side of the worker (worker.js): requests and their replies,
// jobs (an open, statistics, a comparison) with progress and a cancel.
// An open's tensors come as the module's columns (their numbers in a
// transferred buffer), made into rows here by the module's own rows.js, or
// (several Kiln files joined) as one transferred JSON buffer, parsed once.
import { tensorRows } from './inspect/rows.js';

let worker = null;
export let ready = null;
let nextId = 1;
let nextJob = 1;
const pending = new Map();
const progress = new Map();
/** The worker's last count of bytes read, requests and wasm memory. */
export const io = { bytesRead: 0, requests: 0, wasmMemory: 0 };

function onMessage({ data }) {
  if (data.ready) return;
  if (data.progress !== undefined) { progress.get(data.job)?.(data.progress, data.label); return; }
  const done = pending.get(data.id);
  pending.delete(data.id);
  if (data.io) Object.assign(io, data.io);
  if (data.tensorsJson || data.tensorColumns) {
    const t0 = performance.now();
    data.tensors = data.tensorColumns ? tensorRows(...data.tensorColumns) : JSON.parse(new TextDecoder().decode(data.tensorsJson));
    delete data.tensorsJson;
    delete data.tensorColumns;
    data.parseMs = performance.now() - t0;
    data.postMs = performance.timeOrigin + t0 - data.postedAt;
  }
  done?.(data);
}

function start() {
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  ready = new Promise((resolve) => {
    worker.addEventListener('message', ({ data }) => { if (data.ready) resolve(); }, { once: true });
  });
  worker.addEventListener('message', onMessage);
}
start();

/**
 * A new worker, the old one ended (what it was doing replies `cancelled`):
 * wasm memory never shrinks, so a page that opened a file with a large
 * head starts again from a small memory for the next.
 */
export function restart() {
  worker.terminate();
  for (const done of pending.values()) done({ cancelled: true });
  pending.clear();
  progress.clear();
  io.wasmMemory = 0;
  start();
}

/** A new job number: what `call` takes as `job`, and `cancel` stops. */
export const job = () => nextJob++;

/** Sends `msg` to the worker; resolves to its reply. With `onProgress`, the job's progress is reported to it. */
export async function call(msg, onProgress) {
  await ready;
  if (onProgress) progress.set(msg.job, onProgress);
  try {
    return await new Promise((resolve) => { const id = nextId++; pending.set(id, resolve); worker.postMessage({ ...msg, id }); });
  } finally {
    if (onProgress) progress.delete(msg.job);
  }
}

/** Stops job `n` (its reads are aborted; its reply says `cancelled`). */
export function cancel(n) {
  if (n) worker.postMessage({ op: 'cancel', job: n });
}

// A file that could not be opened: the error's code, its message, where
// the fault is, and the bytes around it with the fault's byte marked.
import { $, el, intFmt, fmtBytes, hex } from './ui.js';
import { formatName } from './format.js';

const UNREAD = ['Network', 'NoRange', 'Http', 'Io'];

/** The message without its leading code ("TYPE: a bool byte…" is shown as "a bool byte…" beside the code). */
export const messageOf = (e) => (e.code && e.message.startsWith(`${e.code}: `) ? e.message.slice(e.code.length + 2) : e.message);

/** The format a failed open was read as, from the error's code (the module's `safetensors` and `GGUF` codes are those formats'). */
const formatOfError = (e) => (e.code === 'safetensors' ? 'safetensors' : e.code === 'GGUF' ? 'gguf' : 'kiln');

export function showError(e, hexView, length, name) {
  $('file').hidden = true;
  $('error').hidden = false;
  $('error-code').textContent = e.code ?? 'Error';
  $('error').querySelector('h2').textContent = UNREAD.includes(e.code) ? 'The file could not be read'
    : e.set ? 'The files are not one model' : e.code === 'Aborted' ? 'The open was cancelled' : `Not a valid ${formatName(formatOfError(e))} file`;
  $('error-message').textContent = messageOf(e);
  const off = e.offset;
  const size = length === undefined ? '' : `${fmtBytes(length)}.`;
  $('error-where').textContent = (off === undefined || length === undefined
    ? `${name}${size ? `: ${size}` : '.'}`
    : `${name}: the fault is at byte ${intFmt.format(off)} (${hex(off)}) of ${intFmt.format(length)}${off >= length ? ' \u2014 past the end of the file' : ''}.`)
    + (off === undefined || !hexView ? '' : ' The highlighted byte below is at that offset.');
  renderHex(hexView, off, length);
  document.body.dataset.state = 'error';
  document.title = `${e.code ?? 'Error'} \u2014 ${name} \u2014 Kiln inspector`;
}

function renderHex(view, off, length) {
  const pre = $('hex');
  pre.textContent = '';
  pre.hidden = !view;
  if (!view) return;
  const { start, bytes } = view;
  const end = start + bytes.length;
  const at = off === undefined ? start : Math.min(off, Math.max(length - 1, 0));
  for (let row = start; row < end; row += 16) {
    const line = el('div', { class: off !== undefined && at >= row && at < row + 16 ? 'row-hit' : '' }, el('span', { class: 'off' }, row.toString(16).padStart(8, '0')), '  ');
    let ascii = '';
    for (let i = row; i < row + 16; i++) {
      if (i < end) {
        const b = bytes[i - start];
        line.append(el('span', { class: i === off ? 'hit' : '' }, b.toString(16).padStart(2, '0')), i % 8 === 7 ? '  ' : ' ');
        ascii += b >= 32 && b < 127 ? String.fromCharCode(b) : '.';
      } else line.append('   ');
    }
    line.append(' ', el('span', { class: 'ascii' }, ascii));
    pre.append(line);
  }
  if (off !== undefined && off >= length) pre.append(el('div', { class: 'off' }, `(end of file at ${hex(length)})`));
}

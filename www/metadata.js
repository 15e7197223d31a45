// The model's metadata: each key whole (it wraps only after a '.'), its type, and its value as text, the first 240 characters of it;
// a longer value is read in full on request, in a dialog.
import { $, el, int, breakable } from './ui.js';

/**
 * Text with each control character (but a newline and a tab, in `full`)
 * shown as its code point, dimmed: U+009F is "<9F>", never a Rust escape
 * and never an invisible character.
 */
export function textNodes(text, full = false) {
  const out = [];
  let run = '';
  for (const ch of text) {
    const c = ch.codePointAt(0);
    const control = c < 0x20 || (c >= 0x7f && c < 0xa0);
    if (control && full && (ch === '\n' || ch === '\t')) { run += ch; continue; }
    if (!control) { run += ch; continue; }
    if (run) out.push(run);
    run = '';
    out.push(ch === '\n' ? el('span', { class: 'ctl', title: 'newline' }, '\u21b5') : el('span', { class: 'ctl', title: `U+${c.toString(16).toUpperCase().padStart(4, '0')}` }, `<${c.toString(16).toUpperCase().padStart(2, '0')}>`));
  }
  if (run) out.push(run);
  return out;
}

/**
 * Shows `list` ([{ key, type, preview, chars, items }]); `readAll(i)`
 * resolves to entry i's whole value as text.
 */
export function showMetadata(list, omitted, readAll) {
  const box = $('meta');
  if (!list.length) { box.replaceChildren(el('p', { class: 'muted' }, 'none')); return; }
  box.replaceChildren(...list.map((m, i) => {
    const long = m.chars > m.preview.length;
    const size = m.items !== null ? `${int(m.items)} item${m.items === 1 ? '' : 's'}` : long ? `${int(m.chars)} characters` : null;
    return el('div', { class: 'meta-entry', 'data-key': m.key },
      el('div', { class: 'meta-key' }, el('span', { class: 'key' }, ...breakable(m.key, /(?<=\.)/)), ' ', el('span', { class: 'type' }, m.type)),
      el('div', { class: 'meta-value' }, ...textNodes(m.preview), long ? '\u2026' : ''),
      long ? el('button', {
        class: 'link meta-more', 'data-i': i,
        onclick: async () => open(m, await readAll(i)),
      }, `Show all${size ? ` (${size})` : ''}`) : m.items !== null ? el('span', { class: 'muted meta-size' }, size) : null);
  }), ...(omitted ? [el('p', { class: 'muted' }, `${int(omitted)} more values not listed`)] : []));
}

/** The dialog with one entry's whole value. */
function open(m, text) {
  const dialog = $('meta-dialog');
  dialog.replaceChildren(
    el('div', { class: 'dialog-head' },
      el('h2', {}, el('span', { class: 'key' }, m.key), ' ', el('span', { class: 'type' }, m.type)),
      el('button', { class: 'button small', onclick: () => dialog.close(), autofocus: true }, 'Close')),
    el('p', { class: 'muted' }, m.items !== null ? `${int(m.items)} items, ${int(text.length)} characters as text` : `${int(text.length)} characters`),
    el('pre', { class: 'meta-full', id: 'meta-full' }, ...textNodes(text, true)));
  dialog.showModal();
}

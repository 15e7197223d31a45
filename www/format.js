// What the open file is, as the module says it (its header's `format`
// and `kiln`), and the mode selector, which shows it. The page sniffs no
// byte itself: the selector's detected entries are only shown, and the
// three Kiln readings (a bare directory, a framed or a plain message,
// with the type field's text) are overrides, for a file the module does
// not recognise by its bytes (a plain message, a frame of an unknown
// type).
import { $, el } from './ui.js';

/** The selector's entries: [value, label, an override the user may pick]. */
const MODES = [
  ['auto', 'Detect the format', true],
  ['safetensors', 'safetensors', false],
  ['gguf', 'GGUF', false],
  ['converted-safetensors', 'Kiln, converted from safetensors', false],
  ['converted-gguf', 'Kiln, converted from GGUF', false],
  ['directory', 'Kiln bare directory', true],
  ['framed', 'Kiln framed message', true],
  ['plain', 'Kiln plain message', true],
];

/** The selector's value for a file's header. */
export function detectedMode(header) {
  if (header.format !== 'kiln') return header.format;
  const k = header.kiln;
  if (k.converted_from) return `converted-${k.converted_from}`;
  if (k.type === 'tensors' && !k.framed) return 'directory';
  return k.framed ? 'framed' : 'plain';
}

/** What a person reads the file as: "GGUF", "Kiln, converted from safetensors", "Kiln framed message". */
export const formatTitle = (header) => MODES.find(([v]) => v === detectedMode(header))?.[1] ?? header.format;

/** The format's short name for an error's title ("GGUF", "safetensors", "Kiln"). */
export const formatName = (format) => ({ kiln: 'Kiln', safetensors: 'safetensors', gguf: 'GGUF' })[format] ?? format;

/** Fills the selector; `onPick(value)` when the user picks an override. */
export function setupModes(onPick) {
  const select = $('mode');
  select.replaceChildren(...MODES.map(([value, label, pick]) => el('option', { value, disabled: !pick }, label)));
  select.value = 'auto';
  select.addEventListener('change', () => {
    syncTypeField();
    onPick(select.value);
  });
  syncTypeField();
}

function syncTypeField() {
  const input = $('type-text');
  const mode = $('mode').value;
  input.disabled = mode === 'directory';
  if (mode === 'directory') input.value = '';
}

/** Shows what the module found: the selector's entry, and a message's type text. */
export function showDetected(header) {
  const mode = detectedMode(header);
  $('mode').value = mode;
  $('mode').title = `Detected: ${formatTitle(header)}`;
  $('type-text').value = mode === 'framed' || mode === 'plain' ? header.kiln.type : '';
  syncTypeField();
}

/** Back to detection (a new file): no override. */
export function resetModes() {
  $('mode').value = 'auto';
  $('mode').title = '';
  $('type-text').value = '';
  syncTypeField();
}

/**
 * The reading the user asked for: `{ type, framed }`, each undefined to
 * let the bytes decide. The type field's text is always an override; the
 * selector's Kiln readings fix the framing too.
 */
export function override() {
  const mode = $('mode').value;
  const text = $('type-text').value.trim() || undefined;
  if (mode === 'directory') return { type: 'tensors', framed: false };
  if (mode === 'framed') return { type: text, framed: true };
  if (mode === 'plain') return { type: text, framed: false };
  return { type: text, framed: undefined };
}

/** Sets an override from the URL (`mode`, `type`). */
export function setOverride(mode, type) {
  if (mode && MODES.some(([v, , pick]) => v === mode && pick)) $('mode').value = mode;
  if (type) $('type-text').value = type;
  syncTypeField();
}

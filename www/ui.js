// The page's small helpers: elements, and numbers, bytes and shapes as
// text.

export const $ = (id) => document.getElementById(id);

/** An element with attributes (`class`, `on…` listeners, others as attributes) and children. */
export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) e.append(kid instanceof Node ? kid : String(kid));
  return e;
}

export const intFmt = new Intl.NumberFormat('en-US');

/** An integer with thousands separators (a number, or a 64-bit one as decimal text). */
export const int = (n) => (typeof n === 'string' ? n.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : intFmt.format(n));

/** A value for a narrow cell: six significant digits, the exponent form when that is shorter. */
export function fmtNum(x) {
  if (typeof x === 'bigint' || typeof x === 'string') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const a = Math.abs(x);
  // Under 0.01, six significant digits would need up to 11 characters
  // and be cut in the value grid: the exponent form stays short.
  if (a !== 0 && (a < 1e-2 || a >= 1e7)) return x.toExponential(3);
  return String(Number(x.toPrecision(6)));
}

export function fmtBytes(n) {
  n = Number(n);
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

export const hex = (n, w = 0) => '0x' + (typeof n === 'number' ? n : BigInt(n)).toString(16).padStart(w, '0');
export const shapeText = (s) => `[${s.join(', ')}]`;

/** A tensor's name as the table shows it (a nameless one by its index in its directory). */
export const nameOf = (t) => t.name ?? `#${t.index_in_directory}`;

/**
 * Text with its break opportunities after '.', '_', '/' and '-' (or
 * after what `after` matches): a <wbr> each, so a long name wraps between
 * its parts, never inside one.
 */
export function breakable(text, after = /(?<=[._/\-])/) {
  const parts = text.split(after);
  const out = [];
  parts.forEach((p, i) => { if (i) out.push(document.createElement('wbr')); out.push(p); });
  return out;
}

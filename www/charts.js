// A tensor's histogram and heatmap. Each axis has its two end labels on
// one line under the chart, at its left and right edges, and any note on
// a line of its own, so no label runs into another.
import { el, fmtNum } from './ui.js';

/** The histogram of `bins` (counts from `min` to `max`): a canvas and its axis. */
export function histogram(bins, min, max, note) {
  const canvas = el('canvas', { width: 400, height: 90, 'aria-label': 'Histogram', class: 'hist' });
  const ctx = canvas.getContext('2d');
  const { width: w, height: h } = canvas;
  const top = Math.max(...bins, 1);
  const bw = w / bins.length;
  ctx.fillStyle = '#ea580c';
  bins.forEach((c, i) => {
    if (!c) return;
    const bh = Math.max(1, Math.sqrt(c / top) * (h - 6));
    ctx.fillRect(i * bw + 0.5, h - bh, Math.max(1, bw - 1), bh);
  });
  ctx.fillStyle = '#9ca3af';
  ctx.fillRect(0, h - 1, w, 1);
  return el('figure', { class: 'chart' }, canvas, axis(fmtNum(min), fmtNum(max), 'hist-axis'),
    note ? el('figcaption', { class: 'axis-note' }, note) : null);
}

/** An axis: the low end's label at the left, the high end's at the right. */
function axis(lo, hi, id) {
  return el('div', { class: 'axis', id }, el('span', { class: 'lo' }, lo), el('span', { class: 'hi' }, hi));
}

/**
 * The heatmap of a matrix's `cells` (W x H): diverging blue to red around
 * 0 when the values have both signs, else light to dark.
 */
export function heatmap({ W, H, cells }, note) {
  const canvas = el('canvas', { class: 'heat', width: W, height: H, 'aria-label': 'Heatmap' });
  canvas.style.aspectRatio = `${W} / ${H}`;
  // As wide as the panel, or narrower for a tall matrix (at most 1.2 times as tall as wide).
  canvas.style.width = `${Math.min(100, (120 * W) / H)}%`;
  let lo = Infinity, hi = -Infinity;
  for (const v of cells) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  const diverging = lo < 0 && hi > 0;
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const img = new ImageData(W, H);
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    let rgb;
    if (!Number.isFinite(v)) rgb = [160, 160, 170];
    else if (diverging) {
      const s = Math.min(1, Math.abs(v) / m);
      rgb = v < 0 ? [255 - 200 * s, 255 - 140 * s, 255 - 40 * s] : [255 - 40 * s, 255 - 170 * s, 255 - 215 * s];
    } else {
      const s = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      rgb = [255 - 60 * s, 250 - 170 * s, 240 - 225 * s];
    }
    img.data.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
  const ends = lo > hi ? ['', ''] : diverging ? [`blue \u2264 ${fmtNum(-m)}`, `red \u2265 ${fmtNum(m)}`] : [`light = ${fmtNum(lo)}`, `dark = ${fmtNum(hi)}`];
  return el('figure', { class: 'chart' }, canvas, axis(ends[0], ends[1], 'heat-axis'),
    note ? el('figcaption', { class: 'axis-note' }, note) : null);
}

// A line chart as a standalone SVG (no fonts, scripts or links fetched): what BENCHMARKS.md draws its
// measured curves with. Deterministic, so a plot changes in git only when its figures do.

const WIDTH = 640;
const HEIGHT = 360;
const MARGIN = { left: 72, right: 180, top: 36, bottom: 52 };
const COLOURS = ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bf8700'];

/** Round tick steps (1, 2, 5 × 10^k) covering [0, max] in at most `count` steps. */
function ticks(max, count = 5) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let at = 0; at <= max + step / 2; at += step) out.push(Number(at.toPrecision(12)));
  if (out[out.length - 1] < max) out.push(Number((out[out.length - 1] + step).toPrecision(12)));
  return out;
}

/** 300000 → 300k, 1500000 → 1.5M, 0.25 → 0.25. */
function shortNumber(value) {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`;
  return String(Number(value.toPrecision(3)));
}

const escape = (text) =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A chart of `series` (each `{ name, points: [[x, y], …], dashed? }`) on axes from 0 to a round number
 * above the largest value; every measured point is marked and labelled with its value, lines join them.
 */
export function lineChart({ title, xLabel, yLabel, series }) {
  const points = series.flatMap((one) => one.points);
  const xTicks = ticks(Math.max(...points.map(([x]) => x)));
  const yTicks = ticks(Math.max(...points.map(([, y]) => y)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x) => MARGIN.left + (x / xTicks[xTicks.length - 1]) * plotW;
  const sy = (y) => MARGIN.top + plotH - (y / yTicks[yTicks.length - 1]) * plotH;
  const f = (n) => n.toFixed(1);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<title>${escape(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="13" font-weight="bold">${escape(title)}</text>`,
  ];
  for (const x of xTicks)
    parts.push(
      `<line x1="${f(sx(x))}" y1="${MARGIN.top}" x2="${f(sx(x))}" y2="${MARGIN.top + plotH}" stroke="#eaeef2"/>`,
      `<text x="${f(sx(x))}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${shortNumber(x)}</text>`,
    );
  for (const y of yTicks)
    parts.push(
      `<line x1="${MARGIN.left}" y1="${f(sy(y))}" x2="${MARGIN.left + plotW}" y2="${f(sy(y))}" stroke="#eaeef2"/>`,
      `<text x="${MARGIN.left - 6}" y="${f(sy(y) + 4)}" text-anchor="end">${shortNumber(y)}</text>`,
    );
  parts.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="#57606a"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="#57606a"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">${escape(yLabel)}</text>`,
  );
  series.forEach((one, index) => {
    const colour = COLOURS[index % COLOURS.length];
    const path = one.points.map(([x, y]) => `${f(sx(x))},${f(sy(y))}`).join(' ');
    parts.push(
      `<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2"${one.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    if (!one.dashed)
      one.points.forEach(([x, y], at) => {
        // The last point's value on its left, clear of the legend.
        const last = at === one.points.length - 1 && one.points.length > 1;
        parts.push(
          `<circle cx="${f(sx(x))}" cy="${f(sy(y))}" r="3.5" fill="${colour}"/>`,
          `<text x="${f(sx(x) + (last ? -5 : 5))}" y="${f(sy(y) - 6)}" fill="${colour}"${last ? ' text-anchor="end"' : ''}>${shortNumber(y)}</text>`,
        );
      });
    const legendY = MARGIN.top + 8 + index * 18;
    parts.push(
      `<line x1="${WIDTH - MARGIN.right + 12}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 32}" y2="${legendY}" stroke="${colour}" stroke-width="2"${one.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${WIDTH - MARGIN.right + 38}" y="${legendY + 4}">${escape(one.name)}</text>`,
    );
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}

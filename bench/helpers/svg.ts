/**
 * Plain SVG, written by the bench: no browser, no plotting library. Each function returns
 * a whole standalone document.
 */
const WIDTH = 640;
const HEIGHT = 320;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 50 };
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (value: number): string => (Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3));

function frame(title: string, yLabel: string, yMax: number, body: string, xLabel = ""): string {
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const ticks = Array.from({ length: 5 }, (_, i) => (yMax * i) / 4)
    .map((v) => {
      const y = MARGIN.top + plotH - (v / yMax) * plotH;
      return `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${MARGIN.left - 6}" y="${y + 4}" text-anchor="end">${fmt(v)}</text>`;
    })
    .join("");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14">${escape(title)}</text>`,
    ticks,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`,
    `<text x="${MARGIN.left + (WIDTH - MARGIN.left - MARGIN.right) / 2}" y="${HEIGHT - 8}" text-anchor="middle">${escape(xLabel)}</text>`,
    body,
    `</svg>`,
    "",
  ].join("\n");
}

const niceMax = (value: number): number => {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  return [1, 1.2, 2, 2.5, 5, 10].map((m) => m * magnitude).find((m) => m >= value * 1.05) ?? 10 * magnitude;
};

/** One column per group: every sample as a dot, the median as a bar across. */
export function stripPlot(title: string, yLabel: string, groups: { name: string; samples: readonly number[]; median: number }[]): string {
  const yMax = niceMax(Math.max(...groups.flatMap((g) => g.samples), 0));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const y = (v: number): number => MARGIN.top + plotH - (v / yMax) * plotH;
  const body = groups
    .map((group, i) => {
      const cx = MARGIN.left + (plotW * (i + 0.5)) / groups.length;
      const dots = group.samples
        .map((v, k) => `<circle cx="${(cx + ((k % 9) - 4) * 5).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${COLOURS[i % COLOURS.length]}" fill-opacity="0.6"/>`)
        .join("");
      const median = Number.isFinite(group.median)
        ? `<line x1="${cx - 30}" x2="${cx + 30}" y1="${y(group.median)}" y2="${y(group.median)}" stroke="black" stroke-width="2"/><text x="${cx + 34}" y="${y(group.median) + 4}">${fmt(group.median)}</text>`
        : "";
      return `${dots}${median}<text x="${cx}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${escape(group.name)}</text>`;
    })
    .join("\n");
  return frame(title, yLabel, yMax, body);
}

/** Grouped bars: one group per category, one bar per series. */
export function barChart(title: string, yLabel: string, categories: string[], series: { name: string; values: number[] }[]): string {
  const yMax = niceMax(Math.max(...series.flatMap((s) => s.values.filter(Number.isFinite)), 0));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const groupW = plotW / categories.length;
  const barW = (groupW * 0.7) / series.length;
  const bars = categories
    .map((category, c) => {
      const x0 = MARGIN.left + groupW * c + groupW * 0.15;
      const columns = series
        .map((s, k) => {
          const v = Number.isFinite(s.values[c]) ? s.values[c]! : 0;
          const h = (v / yMax) * plotH;
          const x = x0 + k * barW;
          return `<rect x="${x.toFixed(1)}" y="${(MARGIN.top + plotH - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLOURS[k % COLOURS.length]}"/><text x="${(x + barW / 2).toFixed(1)}" y="${(MARGIN.top + plotH - h - 4).toFixed(1)}" text-anchor="middle" font-size="10">${fmt(v)}</text>`;
        })
        .join("");
      return `${columns}<text x="${MARGIN.left + groupW * (c + 0.5)}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${escape(category)}</text>`;
    })
    .join("\n");
  const legend = series
    .map((s, k) => `<rect x="${MARGIN.left + 10 + k * 170}" y="${MARGIN.top - 12}" width="10" height="10" fill="${COLOURS[k % COLOURS.length]}"/><text x="${MARGIN.left + 24 + k * 170}" y="${MARGIN.top - 3}">${escape(s.name)}</text>`)
    .join("");
  return frame(title, yLabel, yMax, `${bars}\n${legend}`);
}

/** A line through (x, y) points; points flagged `bad` are drawn as red crosses. */
export function curve(title: string, xLabel: string, yLabel: string, points: { x: number; y: number; bad: boolean }[]): string {
  const yMax = niceMax(Math.max(...points.map((p) => p.y), 0));
  const xMax = niceMax(Math.max(...points.map((p) => p.x), 0));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = (v: number): number => MARGIN.left + (v / xMax) * plotW;
  const py = (v: number): number => MARGIN.top + plotH - (v / yMax) * plotH;
  const path = points.map((p, i) => `${i === 0 ? "M" : "L"}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(" ");
  const marks = points
    .map((p) =>
      p.bad
        ? `<path d="M${px(p.x) - 5},${py(p.y) - 5} l10,10 m0,-10 l-10,10" stroke="#d62728" stroke-width="2"/>`
        : `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="4" fill="#2ca02c"/>`,
    )
    .join("");
  const xTicks = Array.from({ length: 5 }, (_, i) => (xMax * i) / 4)
    .map((v) => `<text x="${px(v)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${fmt(v)}</text>`)
    .join("");
  return frame(title, yLabel, yMax, `<path d="${path}" fill="none" stroke="#1f77b4" stroke-width="2"/>${marks}${xTicks}`, xLabel);
}

/**
 * The HTML report: a self-contained page (inline CSS and SVG, no scripts, no
 * external requests) in the manner of an eBASH result page.
 */
import { createHash } from 'node:crypto';

import { loadU54Reference, type Reference } from './reference';
import { fmt, keyTitle, seriesName, type TableKey, tableKeys, tableRows } from './tables';
import type { BenchmarkRun, SeriesResult } from './types';

const esc = (s: unknown) =>
  String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#1d2330;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #dde2ea;padding-bottom:.2rem}
.sub{color:#5b6475}dl.machine{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;background:#f5f7fa;padding:.8rem 1rem;border-radius:6px}
dt{color:#5b6475}dd{margin:0;font-family:ui-monospace,monospace}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{padding:.15rem .6rem;text-align:right;border-bottom:1px solid #eef1f5}th{background:#f5f7fa;font-weight:600}
td.name,th.name{text-align:left}td.spread{color:#c0392b;font-weight:700}tr.ref td{color:#7a6a2b;background:#fffaf0}
tr.other td{color:#5b6475}.tables h3{margin-bottom:.2rem}
figure{margin:0}svg text{font:11px system-ui,sans-serif;fill:#3b4252}.note{color:#5b6475;font-size:.9em}
.faster{color:#1e7b34}.slower{color:#c0392b}`;

/**
 * The Content-Security-Policy the report is served with: nothing may load or run but its one
 * inline <style>, allowed by its hash (no 'unsafe-inline'); no scripts at all, no framing.
 */
export const REPORT_CONTENT_SECURITY_POLICY =
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function page(title: string, body: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>` +
    `<body>${body}</body></html>\n`
  );
}

function machineBlock(run: BenchmarkRun): string {
  const m = run.machine;
  const items: [string, string][] = [
    ['architecture', m.arch],
    ['CPU', `${m.cpuModel} (${m.cores} cores)`],
    ['OS', m.os],
    [
      'counter',
      `${m.counter}, ${(m.counterHz / 1e9).toFixed(4)} GHz measured against the monotonic clock`,
    ],
    [
      'core clock',
      `≈ ${(m.coreHzEstimate / 1e9).toFixed(2)} GHz (ESTIMATE from a chain of dependent adds)`,
    ],
    ['Node.js', m.node],
    ['@hashq/native', m.libraryVersion],
    ['host', m.hostname],
    [
      'run',
      `${run.startedAt}, ${(run.durationMs / 1000).toFixed(1)} s${run.settings.quick ? ', quick mode' : ''}`,
    ],
    [
      'method',
      `${run.settings.measurements} measurements per length (${run.settings.longMeasurements} at ${run.settings.longFrom} and ${run.settings.longTo} bytes), random messages, counter overhead of ${run.settings.counterOverhead} ticks subtracted`,
    ],
    [
      'implementations',
      Object.entries(m.implementations)
        .map(([a, i]) => `${a}: ${i}`)
        .join(', '),
    ],
  ];
  return `<dl class="machine">${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}

/** Hues a golden angle apart: neighbours in the legend never look alike. */
const PALETTE = (i: number) => `hsl(${Math.round((i * 137.508) % 360)} 65% 40%)`;

/** Cycles/byte against message length, both log scales, one polyline per
 * algorithm of our addon (lengths ≥ 1; "long" drawn at the slope's end). */
export function plotSvg(run: BenchmarkRun): string {
  const series = run.series.filter((s) => s.provider === 'hashq');
  const W = 1040,
    H = 520,
    L = 60,
    R = 230,
    T = 20,
    B = 45;
  const points = (s: SeriesResult) =>
    [
      ...s.lengths
        .filter((l) => l.length > 0)
        .map((l) => [l.length, l.cyclesPerByte.median] as const),
      [run.settings.longTo, s.long.cyclesPerByte.median] as const,
    ].filter(([, y]) => y > 0);
  const all = series.flatMap(points);
  const xs = all.map(([x]) => Math.log2(x));
  const ys = all.map(([, y]) => Math.log10(y));
  const x0 = Math.min(0, ...xs),
    x1 = Math.max(1, ...xs);
  const y0 = Math.floor(Math.min(...ys, 0)),
    y1 = Math.ceil(Math.max(...ys, 1));
  const px = (x: number) => L + ((Math.log2(x) - x0) / (x1 - x0)) * (W - L - R);
  const py = (y: number) => T + (1 - (Math.log10(y) - y0) / (y1 - y0)) * (H - T - B);
  const grid: string[] = [];
  for (let e = Math.ceil(x0); e <= x1; e += 2) {
    const x = px(2 ** e);
    grid.push(
      `<line x1="${x.toFixed(1)}" y1="${T}" x2="${x.toFixed(1)}" y2="${H - B}" stroke="#e5e9f0"/>`,
    );
    grid.push(
      `<text x="${x.toFixed(1)}" y="${H - B + 15}" text-anchor="middle">${2 ** e >= 1024 ? `${2 ** e / 1024}K` : 2 ** e}</text>`,
    );
  }
  for (let e = y0; e <= y1; e++) {
    const y = py(10 ** e);
    grid.push(
      `<line x1="${L}" y1="${y.toFixed(1)}" x2="${W - R}" y2="${y.toFixed(1)}" stroke="#e5e9f0"/>`,
    );
    grid.push(`<text x="${L - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${10 ** e}</text>`);
  }
  const lines = series.map((s, i) => {
    const color = PALETTE(i);
    const dash = ['', ' stroke-dasharray="6 3"', ' stroke-dasharray="2 2"'][i % 3];
    const pts = points(s)
      .map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    const ly = T + 4 + i * Math.min(18, (H - T - B) / Math.max(series.length, 1));
    return (
      `<g class="series" data-algorithm="${esc(s.algorithm)}"><polyline fill="none" stroke="${color}" stroke-width="1.6"${dash} points="${pts}"/>` +
      `<line x1="${W - R + 12}" y1="${ly.toFixed(1)}" x2="${W - R + 30}" y2="${ly.toFixed(1)}" stroke="${color}" stroke-width="3"${dash}/>` +
      `<text x="${W - R + 36}" y="${(ly + 4).toFixed(1)}">${esc(s.algorithm)} (${esc(s.implementation)})</text></g>`
    );
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="cycles per byte against message length">` +
    `${grid.join('')}<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#9aa3b2"/>${lines.join('')}` +
    `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">message length, bytes (log scale; last point: long-message slope)</text>` +
    `<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(run.machine.counter)} ticks per byte (log scale)</text></svg>`
  );
}

function referenceKey(key: TableKey): string {
  return String(key);
}

function lengthTable(run: BenchmarkRun, key: TableKey, reference?: Reference): string {
  const rows = tableRows(run, key).map(
    (r) =>
      `<tr class="${r.provider === 'hashq' ? 'ours' : 'other'}"><td>${fmt(r.cyclesPerByte.q1)}</td><td>${fmt(r.cyclesPerByte.median)}</td>` +
      `<td>${fmt(r.cyclesPerByte.q3)}</td><td class="spread">${r.spread ? '?' : ''}</td><td class="name">${esc(seriesName(r))}</td>` +
      `<td class="name">${esc(r.implementation)}</td><td>${fmt(r.nsPerByte)}</td><td>${key === 0 ? '' : fmt(r.mbPerSecond)}</td><td>${fmt(r.coreCyclesPerByte)}</td></tr>`,
  );
  const refRows = reference?.lengths[referenceKey(key)] ?? [];
  const beside = run.machine.arch === reference?.arch;
  if (beside) {
    for (const r of refRows) {
      rows.push(
        `<tr class="ref"><td>${fmt(r.q1)}</td><td>${fmt(r.median)}</td><td>${fmt(r.q3)}</td><td class="spread">${r.spread ? '?' : ''}</td>` +
          `<td class="name">${esc(r.primitive)}</td><td class="name">eBASH U54 (core cycles)</td><td></td><td></td><td></td></tr>`,
      );
    }
  }
  return (
    `<section><h3>${esc(keyTitle(key, run))}</h3><table><thead><tr><th>25%</th><th>50%</th><th>75%</th><th></th>` +
    `<th class="name">algorithm</th><th class="name">implementation</th><th>${key === 0 ? 'ns' : 'ns/B'}</th><th>MB/s</th><th>≈core c/B</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table></section>`
  );
}

function serializeTable(run: BenchmarkRun): string {
  const rows = run.series
    .filter((s) => s.serializeRestore)
    .sort((a, b) => a.serializeRestore!.median - b.serializeRestore!.median)
    .map((s) => {
      const q = s.serializeRestore!;
      const ns = (q.median * 1e9) / run.machine.counterHz;
      return `<tr><td>${fmt(q.q1)}</td><td>${fmt(q.median)}</td><td>${fmt(q.q3)}</td><td class="name">${esc(s.algorithm)}</td><td>${fmt(ns)}</td></tr>`;
    });
  return `<table><thead><tr><th>25%</th><th>50%</th><th>75%</th><th class="name">algorithm</th><th>ns (median)</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function referenceSection(reference: Reference): string {
  const keys = Object.keys(reference.lengths);
  const tables = keys.map((k) => {
    const rows = reference.lengths[k].map(
      (r) =>
        `<tr class="ref"><td>${fmt(r.q1)}</td><td>${fmt(r.median)}</td><td>${fmt(r.q3)}</td><td class="spread">${r.spread ? '?' : ''}</td><td class="name">${esc(r.primitive)}</td></tr>`,
    );
    return `<section><h3>${k === 'long' ? 'long messages' : `${k} bytes`}</h3><table><thead><tr><th>25%</th><th>50%</th><th>75%</th><th></th><th class="name">primitive</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
  });
  return `<h2>Reference: eBASH, ${esc(reference.machine)}</h2><p class="note">Source: ${esc(reference.source)}. ${esc(reference.unit)}, core cycles of the eBASH C implementations.</p><div class="tables">${tables.join('')}</div>`;
}

export function renderReport(
  run: BenchmarkRun,
  reference: Reference | undefined = loadU54Reference(),
): string {
  const title = `hashq benchmark: ${run.machine.arch}, ${run.machine.cpuModel}`;
  const body = [
    `<h1>${esc(title)}</h1>`,
    `<p class="sub">eBASH-style cycles per byte${run.label ? ` · ${esc(run.label)}` : ''}${run.id ? ` · run ${esc(run.id)}` : ''}. ` +
      `Figures are ticks of the <b>${esc(run.machine.counter)}</b> counter (${(run.machine.counterHz / 1e9).toFixed(3)} GHz), ` +
      `not core cycles; "≈core c/B" converts with the estimated core clock. "?" marks quartiles further apart than 10 % of the median.</p>`,
    `<h2>Machine</h2>${machineBlock(run)}`,
    `<h2>Cycles per byte against message length</h2><figure>${plotSvg(run)}</figure>`,
    `<h2>Tables per message length</h2><div class="tables">${tableKeys(run)
      .map((k) => lengthTable(run, k, reference))
      .join('')}</div>`,
    `<h2>serialize() + Hasher.restore() (${esc(run.machine.counter)} ticks)</h2>${serializeTable(run)}`,
    reference ? referenceSection(reference) : '',
  ];
  return page(title, body.join('\n'));
}

/** Two runs side by side: median cycles/byte per series and length, and B ÷ A. */
export function renderComparison(a: BenchmarkRun, b: BenchmarkRun): string {
  const name = (r: BenchmarkRun, tag: string) =>
    `${tag}: ${r.label ?? r.id ?? r.startedAt} (${r.machine.arch}, ${r.machine.cpuModel})`;
  const keys = tableKeys(a).filter((k) => k === 'long' || b.settings.lengths.includes(k));
  const sections = keys.map((key) => {
    const rowsA = new Map(tableRows(a, key).map((r) => [`${r.algorithm}|${r.provider}`, r]));
    const rows = tableRows(b, key)
      .filter((r) => rowsA.has(`${r.algorithm}|${r.provider}`))
      .map((rb) => {
        const ra = rowsA.get(`${rb.algorithm}|${rb.provider}`)!;
        const ratio = rb.cyclesPerByte.median / ra.cyclesPerByte.median;
        const cls = ratio < 0.95 ? 'faster' : ratio > 1.05 ? 'slower' : '';
        return (
          `<tr><td class="name">${esc(seriesName(rb))}</td><td class="name">${esc(ra.implementation)}</td><td>${fmt(ra.cyclesPerByte.median)}</td>` +
          `<td class="name">${esc(rb.implementation)}</td><td>${fmt(rb.cyclesPerByte.median)}</td><td class="${cls}">${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'}</td></tr>`
        );
      });
    return (
      `<section><h3>${esc(keyTitle(key, a))}</h3><table class="compare"><thead><tr><th class="name">algorithm</th><th class="name">impl A</th><th>A c/B</th>` +
      `<th class="name">impl B</th><th>B c/B</th><th>B ÷ A</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`
    );
  });
  const body = [
    `<h1>hashq benchmark comparison</h1>`,
    `<p class="sub">${esc(name(a, 'A'))}<br>${esc(name(b, 'B'))}<br>Median ticks per byte of each run's own counter; B ÷ A below 1: B needs fewer ticks.</p>`,
    `<h2>Machine A</h2>${machineBlock(a)}<h2>Machine B</h2>${machineBlock(b)}`,
    `<h2>Plots</h2><figure>${plotSvg(a)}<figcaption>A</figcaption></figure><figure>${plotSvg(b)}<figcaption>B</figcaption></figure>`,
    `<h2>Per message length</h2><div class="tables">${sections.join('')}</div>`,
  ];
  return page('hashq benchmark comparison', body.join('\n'));
}

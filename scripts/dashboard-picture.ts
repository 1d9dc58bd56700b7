/**
 * The picture of keel's Grafana dashboard in docs/operations.md, from a real run: a keel App under
 * traffic (with a Redis outage in the middle) scraped every second by a real Prometheus; each panel's
 * query of operations/grafana-dashboard.json is run over the run's time range and drawn with uPlot in
 * the dashboard's layout, and headless Chromium screenshots the page. Grafana itself is not installable
 * here (neither Debian nor npm has it), so this draws the same queries, not Grafana's rendering.
 *
 *   npm run dashboard-picture [-- --out docs/img/dashboard.png --seconds 90]
 *
 * Needs redis-server, prometheus and chromium (Debian's packages, as CI installs them).
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { startRedis } from '../test/helpers/redis-server.js';
import { startPrometheus } from '../test/helpers/prometheus.js';
import { startObservedApp } from '../test/helpers/observed-app.js';
import { CHROMIUM } from '../test/helpers/browser.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({ options: { out: { type: 'string', default: 'docs/img/dashboard.png' }, seconds: { type: 'string', default: '90' } } });
const seconds = Number(args.seconds);
if (!(seconds >= 30 && seconds <= 600)) throw new Error(`--seconds must be between 30 and 600, got ${args.seconds}`);

interface Target { expr: string; legendFormat: string }
interface Panel { type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; targets?: Target[]; fieldConfig?: { defaults?: { unit?: string } } }
const dashboard = JSON.parse(readFileSync(`${root}operations/grafana-dashboard.json`, 'utf8')) as { title: string; panels: Panel[] };
const JOB = 'keel';
/** Page width in pixels; Grafana's grid is 24 columns, 30 px per row unit. */
const WIDTH = 1000;
/** Grafana's $__rate_interval for a 1 s scrape is 4 s; a little wider reads better on a short run. */
const RATE_INTERVAL = '10s';

// The run's own errors (the 500s and failed jobs it makes on purpose, the outage) are not news here.
process.env.KEEL_LOG_LEVEL ??= 'silent';
const redis = await startRedis();
const observed = await startObservedApp(redis.url, { queue: 'keel-background', slowMs: 300 });
const prometheus = await startPrometheus({ targets: [{ job: JOB, url: observed.url }] });
try {
  await prometheus.scrapes(1);
  const start = Math.floor(Date.now() / 1000);
  const until = (s: number) => Date.now() < (start + s) * 1000;
  // Traffic: mixed rounds (see startObservedApp), more of them in the middle; Redis killed from 45 % to 60 % of the run.
  let round = 0;
  const outageAt = seconds * 0.45;
  const backAt = seconds * 0.6;
  let phase: 'up' | 'down' | 'back' = 'up';
  while (until(seconds)) {
    const elapsed = Date.now() / 1000 - start;
    if (phase === 'up' && elapsed > outageAt) {
      phase = 'down';
      await redis.kill();
      console.log(`${elapsed.toFixed(0)} s: redis-server killed`);
    } else if (phase === 'down' && elapsed > backAt) {
      phase = 'back';
      await redis.start();
      console.log(`${(Date.now() / 1000 - start).toFixed(0)} s: redis-server back`);
    }
    const busy = 1 + Math.round(2 * Math.sin((Math.PI * elapsed) / seconds) ** 2);
    await Promise.all(Array.from({ length: busy }, () => observed.traffic(round++)));
    await sleep(150);
  }
  await prometheus.scrapes(2);
  const end = Math.floor(Date.now() / 1000);

  const substitute = (expr: string) => expr.replaceAll('$__rate_interval', RATE_INTERVAL).replaceAll('$job', JOB).replaceAll('$instance', '.*');
  const legend = (format: string, metric: Record<string, string>) => format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => metric[k] ?? '').trim() || '(value)';
  const panels = [];
  for (const p of dashboard.panels) {
    if (p.type === 'row') {
      panels.push({ title: p.title, row: true, gridPos: p.gridPos });
      continue;
    }
    const series: { name: string; points: [number, number][] }[] = [];
    for (const t of p.targets ?? []) {
      const answer = await prometheus.queryRange(substitute(t.expr), start, end, 1);
      if (answer.status !== 'success') throw new Error(`${p.title}: ${answer.error} in ${t.expr}`);
      for (const s of answer.result) series.push({ name: legend(t.legendFormat, s.metric).replace(`${new URL(observed.url).host} `, ''), points: (s.values ?? []).map(([ts, v]) => [ts, Number(v)]) });
    }
    panels.push({ title: p.title, type: p.type, unit: p.fieldConfig?.defaults?.unit ?? 'short', gridPos: p.gridPos, series });
  }

  const uplotJs = readFileSync(`${root}node_modules/uplot/dist/uPlot.iife.min.js`, 'utf8');
  const uplotCss = readFileSync(`${root}node_modules/uplot/dist/uPlot.min.css`, 'utf8');
  const html = page(dashboard.title, panels, start, end, uplotJs, uplotCss);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
  try {
    const tab = await browser.newPage({ viewport: { width: WIDTH, height: 800 }, deviceScaleFactor: 1 });
    await tab.setContent(html);
    await tab.waitForFunction(() => (globalThis as unknown as { drawn?: boolean }).drawn === true, undefined, { timeout: 30_000 });
    const out = resolve(root, args.out);
    await tab.screenshot({ path: out, fullPage: true });
    console.log(`${out}: ${Math.round(statSync(out).size / 1024)} KB, ${panels.filter((x) => !('row' in x)).length} panels, ${end - start} s of data`);
  } finally {
    await browser.close();
  }
} finally {
  await prometheus.stop();
  await observed.close();
  await redis.stop();
}
// The run is over: exit rather than wait for a library's timers (BullMQ, ioredis) to let go.
process.exit(0);

function page(title: string, panels: unknown[], start: number, end: number, uplotJs: string, uplotCss: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>${uplotCss}
body { margin: 0; background: #111217; color: #ccccdc; font: 12px system-ui, sans-serif; }
h1 { font-size: 15px; font-weight: 500; margin: 8px 10px; }
h1 small { color: #8e8e9e; font-weight: 400; margin-left: 12px; }
#grid { position: relative; margin: 0 6px; }
.panel { position: absolute; box-sizing: border-box; background: #181b1f; border: 1px solid #2a2d33; border-radius: 2px; padding: 4px 6px; overflow: hidden; }
.panel h2 { font-size: 12px; font-weight: 500; margin: 0 0 2px; color: #d8d9da; }
.row { position: absolute; font-size: 13px; font-weight: 500; color: #d8d9da; padding: 6px 2px; }
.empty { color: #6e6e7e; padding-top: 40px; text-align: center; }
.u-legend { font-size: 10px; text-align: left; } .u-legend .u-marker { width: 8px; height: 8px; }
.u-legend th { font-weight: 400; } .u-legend td, .u-legend th { padding: 0 4px 0 0; }
.u-legend .u-series > * { padding: 0 2px; }
</style><script>${uplotJs}</script></head><body>
<h1>${title} <small>the dashboard's queries over a ${end - start} s run of keel (Prometheus scraping every 1 s; Redis killed and restarted mid-run), drawn by keel's dashboard-picture script, not Grafana</small></h1>
<div id="grid"></div>
<script>
const panels = ${JSON.stringify(panels)};
const UNIT = 26, COL = (${WIDTH} - 12) / 24, GAP = 4;
const colors = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#ff9830', '#96d98d', '#ffee52'];
const fmt = (unit, v) => {
  if (v == null || !isFinite(v)) return '';
  const a = Math.abs(v);
  if (unit === 'percentunit') return (v * 100).toFixed(a < 0.1 ? 1 : 0) + '%';
  if (unit === 's') return a >= 1 ? v.toFixed(1) + ' s' : (v * 1000).toFixed(a < 0.01 ? 1 : 0) + ' ms';
  if (unit === 'bytes') return (v / 1048576).toFixed(0) + ' MiB';
  const n = a >= 1000 ? (v / 1000).toFixed(1) + 'k' : a >= 10 || a === 0 ? v.toFixed(0) : v.toFixed(a >= 1 ? 1 : 2);
  return unit === 'reqps' ? n + ' req/s' : unit === 'ops' ? n + '/s' : n;
};
const grid = document.getElementById('grid');
let bottom = 0;
for (const p of panels) {
  const g = p.gridPos, x = g.x * COL, y = g.y * UNIT, w = g.w * COL - GAP, h = g.h * UNIT - GAP;
  bottom = Math.max(bottom, y + h);
  const el = document.createElement('div');
  if (p.row) { el.className = 'row'; el.style.cssText = 'left:' + x + 'px;top:' + y + 'px'; el.textContent = p.title; grid.appendChild(el); continue; }
  el.className = 'panel'; el.style.cssText = 'left:' + x + 'px;top:' + y + 'px;width:' + w + 'px;height:' + h + 'px';
  el.innerHTML = '<h2></h2>'; el.firstChild.textContent = p.title; grid.appendChild(el);
  if (!p.series.length) { const e = document.createElement('div'); e.className = 'empty'; e.textContent = 'No data (nothing of this kind happened in the run)'; el.appendChild(e); continue; }
  const times = [...new Set(p.series.flatMap((s) => s.points.map((q) => q[0])))].sort((a, b) => a - b);
  const data = [times, ...p.series.map((s) => { const m = new Map(s.points); return times.map((t) => (m.has(t) && isFinite(m.get(t)) ? m.get(t) : null)); })];
  const legendRows = Math.ceil(p.series.length / Math.max(1, Math.floor(w / 150)));
  new uPlot({
    width: w - 12, height: Math.max(60, h - 30 - legendRows * 15),
    cursor: { show: false }, legend: { show: true, live: false },
    scales: { x: { time: true }, y: { range: (u, min, max) => [Math.min(0, min), p.type === 'state-timeline' ? 1.1 : max > 0 ? max * 1.1 : 1] } },
    axes: [
      { stroke: '#8e8e9e', grid: { stroke: '#25282d' }, ticks: { stroke: '#25282d' }, font: '10px system-ui', size: 24, values: (u, vals) => vals.map((v) => new Date(v * 1000).toISOString().slice(11, 19)) },
      { stroke: '#8e8e9e', grid: { stroke: '#25282d' }, ticks: { stroke: '#25282d' }, font: '10px system-ui', size: 58, values: (u, vals) => vals.map((v) => p.type === 'state-timeline' ? (v === 1 ? 'up' : v === 0 ? 'down' : '') : fmt(p.unit, v)) },
    ],
    series: [{}, ...p.series.map((s, i) => ({ label: s.name, stroke: colors[i % colors.length], width: 1, points: { show: false }, paths: p.type === 'state-timeline' ? uPlot.paths.stepped({ align: 1 }) : undefined }))],
  }, data, el);
}
grid.style.height = bottom + 'px';
globalThis.drawn = true;
</script></body></html>`;
}

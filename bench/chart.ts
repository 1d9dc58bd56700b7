/**
 * A dependency-free SVG chart of a run: one row per scenario, one bar per peer. Scenarios differ by
 * orders of magnitude, so each row is scaled to its own fastest peer; the bars carry their req/s
 * and the row its keel/Fastify ratio.
 */
import { PEERS, PEER_LABELS, type Peer } from './scenarios.js';
import type { RunResult } from './stats.js';

const COLORS: Record<Peer, string> = {
  keel: '#e66100',
  node: '#7f7f7f',
  fastify: '#5d3a9b',
  express: '#1a85ff',
  'express-std': '#0b3d6b',
  'express-keel': '#f5a25d',
  'keel-express': '#b8321a',
  express4: '#6fa8dc',
  'keel-express4': '#8c1d0b',
};

/** Row labels a reader can take in at a glance (ids as fallback). */
const LABELS: Record<string, string> = {
  hello: 'hello JSON (features off)',
  param: 'path parameter',
  query: 'query + validation',
  'json-100b': 'JSON ~100 B + schema',
  'json-5kb': 'JSON ~5 KB + schema',
  'json-150kb': 'JSON ~150 KB + schema',
  'json-invalid': 'JSON failing its schema (422 / 400)',
  problem: '404 problem from a handler',
  'method-not-allowed': '405 problem (method not served)',
  'too-large': '413 body over the limit',
  form: 'urlencoded form',
  multipart: 'multipart upload 16 KB',
  jwt: 'JWT (HS256) route',
  compress: '20 KB JSON, gzip',
  static: 'static file 16 KB',
  full: 'full default stack',
  'express-kit': 'Express kit (4 packages vs keel)',
  'express-engine': 'Express app, 40 resources',
  'express-engine-hello': 'Express hello world',
  jsonrpc: 'JSON-RPC call',
  graphql: 'GraphQL query',
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const short = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n >= 1000 ? `${(n / 1000).toFixed(2)}k` : n.toFixed(0));

export function svgChart(run: RunResult): string {
  const peers = PEERS.filter((p) => run.scenarios.some((s) => s.results.some((r) => r.peer === p)));
  const W = 980;
  const labelW = 230;
  const ratioW = 130;
  const barMax = W - labelW - ratioW - 70;
  const barH = 13;
  const rowGap = 16;
  const top = 92;
  const parts: string[] = [];
  let y = top;
  for (const s of run.scenarios) {
    // Only the peers measured in this scenario get a bar (n/a peers are listed in the Markdown).
    const present = peers.filter((p) => s.results.some((r) => r.peer === p));
    const max = Math.max(...s.results.map((r) => r.rps), 1);
    const rowH = Math.max(present.length * (barH + 2), 34);
    parts.push(`<text x="${labelW - 12}" y="${y + rowH / 2 + 5}" text-anchor="end" class="label">${esc(LABELS[s.id] ?? s.id)}</text>`);
    present.forEach((p, i) => {
      const r = s.results.find((x) => x.peer === p)!;
      const by = y + i * (barH + 2);
      const w = Math.max(1, (r.rps / max) * barMax);
      parts.push(`<rect x="${labelW}" y="${by}" width="${w.toFixed(1)}" height="${barH}" fill="${COLORS[p]}"><title>${esc(PEER_LABELS[p])}: ${Math.round(r.rps)} req/s</title></rect>`);
      parts.push(`<text x="${(labelW + w + 5).toFixed(1)}" y="${by + barH - 2}" class="value${p === 'keel' ? ' keel' : ''}">${short(r.rps)}</text>`);
    });
    const ratios: string[] = [];
    const fr = s.ratios.fastify;
    if (fr !== undefined) ratios.push(`<tspan class="ratio ${fr >= 1 ? 'good' : 'bad'}">${fr.toFixed(2)}× Fastify</tspan>`);
    const ex = s.ratios['express-std'] ?? s.ratios.express;
    if (ex !== undefined) ratios.push(`<tspan x="${W - 16}" dy="16" class="minor">${ex.toFixed(1)}× ${s.ratios['express-std'] !== undefined ? 'Express+std' : 'Express'}</tspan>`);
    const cpu = s.cpuRatios?.fastify;
    if (cpu) {
      // cpuRatios is Fastify's CPU per request ÷ keel's; say it as keel's extra or saved CPU.
      const more = 1 / cpu - 1;
      ratios.push(`<tspan x="${W - 16}" dy="15" class="minor">CPU/req ${more > 0 ? '+' : '−'}${Math.abs(more * 100).toFixed(0)}% vs Fastify</tspan>`);
    }
    if (ratios.length) parts.push(`<text x="${W - 16}" y="${y + rowH / 2 + 5 - (ratios.length - 1) * 8}" text-anchor="end">${ratios.join('')}</text>`);
    parts.push(`<line x1="16" x2="${W - 16}" y1="${y + rowH + rowGap / 2}" y2="${y + rowH + rowGap / 2}" class="sep"/>`);
    y += rowH + rowGap;
  }
  const legend = peers
    .map((p, i) => `<rect x="${16 + i * 185}" y="52" width="14" height="14" fill="${COLORS[p]}"/><text x="${36 + i * 185}" y="64" class="legend">${esc(PEER_LABELS[p])}</text>`)
    .join('');
  const m = run.machine;
  const st = run.settings;
  const H = y + 40;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">
<style>
  .title { font-size: 19px; font-weight: bold; fill: #222; }
  .label { font-size: 14px; fill: #222; }
  .legend { font-size: 13px; fill: #222; }
  .value { font-size: 11px; fill: #444; }
  .value.keel { font-weight: bold; fill: #b34700; }
  .minor { font-size: 12px; fill: #555; }
  .ratio { font-size: 13px; font-weight: bold; }
  .good { fill: #1b7f3b; } .bad { fill: #b00020; }
  .sep { stroke: #e5e5e5; stroke-width: 1; }
  .foot { font-size: 11px; fill: #666; }
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="32" class="title">keel benchmark: requests per second (median of rounds; each row scaled to its fastest peer)</text>
${legend}
${parts.join('\n')}
<text x="16" y="${H - 16}" class="foot">${esc(`${m.nproc} × ${m.cpu}, Node ${m.node}; ${st.connections} connections, ${st.rounds} rounds × ${st.durationSec} s; ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC`)}</text>
</svg>
`;
}

/** `--list` output: the cases to run, the skipped ones, and the route tables an implementation must serve. */
import { buildManifest } from './manifest.js';
import { wireFor } from './runner.js';
import { isRunnable, isRunnableWebSocket, type ConformanceCase, type LoadedCase, type WebSocketCase } from './types.js';

/** Longest request target `--list` prints in full. */
const MAX_LISTED_TARGET = 80;

/** One line of `--list` for an HTTP case: the request as sent (method, target), its expected status, and the route when the request is not plainly for it. */
function caseLine(c: ConformanceCase): string {
  const wire = wireFor(c, false);
  const target = wire.path.length > MAX_LISTED_TARGET ? `${wire.path.slice(0, MAX_LISTED_TARGET)}… (${wire.path.length} characters)` : wire.path;
  const route = `${c.handler.method.toUpperCase()} ${c.handler.route}`;
  return `  ${c.id}  ${wire.method} ${target} -> ${c.expected.status_code}${route === `${wire.method} ${wire.path}` ? '' : `  (route ${route})`}`;
}

/** One line of `--list` for a WebSocket session case: route, frames sent and expected, how it ends. */
function sessionLine(c: WebSocketCase): string {
  const { handler, session } = c.websocket;
  const sends = session.messages.filter((m) => m.direction === 'send').length;
  const receives = session.messages.length - sends;
  const end = session.abnormal_close ? 'dropped' : `close ${session.close_code ?? 1000}`;
  return `  ${c.id}  WebSocket ${handler.route} (${handler.behavior ?? 'no behavior'}): ${sends} sent, ${receives} expected, ${end}`;
}

/** Under a case's line: why it exists, and its standing (`[required] RFC 9110 §15.5.6: …`), when it has them. */
function aboutLines(c: LoadedCase): string[] {
  const out: string[] = [];
  if (c.description) out.push(`      ${c.description}`);
  if (c.requirement) out.push(`      [${c.requirement}] ${c.basis ?? ''}`);
  return out;
}

/** `--list`: one line per case (id, method and target sent, expected status, route; WebSocket sessions), then the route tables. */
export function formatList(cases: readonly LoadedCase[]): string {
  const manifest = buildManifest(cases);
  const sessions = cases.filter(isRunnableWebSocket);
  const skipped = manifest.skipped.filter((s) => !sessions.some((w) => w.id === s.id));
  const lines = [`${manifest.cases.length + sessions.length + manifest.protocols.length} cases to run${skipped.length ? ` (${skipped.length} skipped)` : ''}:`];
  for (const c of cases) if (isRunnable(c)) lines.push(caseLine(c), ...aboutLines(c));
  for (const c of sessions) lines.push(sessionLine(c), ...aboutLines(c));
  // Other protocols (kinds/): each is served on its own, from its manifest entry's `server`.
  for (const p of manifest.protocols) lines.push(`  ${p.id}  ${p.kind} case (served on its own: --manifest protocols[].server)`);
  for (const s of skipped) lines.push(`  ${s.id}  skipped: ${s.reason}`);
  lines.push('', `Routes to serve (${manifest.routes.length}; "handlers" > 1: cases need different definitions of one route, see --exec):`);
  for (const r of manifest.routes) lines.push(`  ${r.method.padEnd(7)} ${r.route}  (${r.route_colon})  ${r.cases.length} case${r.cases.length === 1 ? '' : 's'}${r.handlers > 1 ? `, ${r.handlers} handlers` : ''}`);
  if (sessions.length) {
    const routes = new Map<string, WebSocketCase[]>();
    for (const c of sessions) routes.set(c.websocket.handler.route, [...(routes.get(c.websocket.handler.route) ?? []), c]);
    lines.push('', `WebSocket routes to serve (${routes.size}; not in --manifest, not run under --exec):`);
    for (const [route, list] of routes) {
      const defs = new Set(list.map((c) => JSON.stringify(c.websocket.handler))).size;
      lines.push(`  WS      ${route}  ${list.length} case${list.length === 1 ? '' : 's'}${defs > 1 ? `, ${defs} handlers` : ''}`);
    }
  }
  return lines.join('\n');
}

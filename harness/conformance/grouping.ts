/**
 * Which cases may share a server under `--exec` (`--group`). Grouping must never change a verdict:
 * a correct implementation gets the same result as with one server per case. Two things make a
 * case's expected answer depend on what else its server serves, and both are read from the cases:
 *
 * - **the request is not for the case's own handler** (another method or a path its route does not
 *   match: HEAD on a GET route, an OPTIONS preflight, an unknown path or method), or the case expects
 *   404, 405 or an `Allow` header. The answer then depends on every route of the server (RFC 9110
 *   §15.5.6: `Allow` lists the methods *the target resource* supports; a 404 holds only while no route
 *   matches). Such a case shares a server only with cases of its very handler definition, so the
 *   server serves exactly what it declares.
 * - **another route of the group matches the request** (`/things/{id}` and `/things/special`, or a
 *   method + route pair two definitions claim): the router's precedence, not the case, would decide.
 *   Such cases are put in different groups.
 *
 * A case with a rate limit always gets a server of its own (no case sees another's counters).
 */
import { routeKey } from './manifest.js';
import type { ConformanceCase } from './types.js';

export type ExecGrouping = 'route' | 'handler' | 'case';
export const EXEC_GROUPINGS: readonly ExecGrouping[] = ['route', 'handler', 'case'];

/** Statuses whose answer depends on the other routes of the server (not found, method not allowed). */
const SHAPE_STATUSES: ReadonlySet<number> = new Set([404, 405]);

const PLACEHOLDER = /^\{[A-Za-z_][A-Za-z0-9_]*(?::([A-Za-z]+))?\}$/;
const regexCache = new Map<string, RegExp>();

/** A route pattern (`/items/{id:int}`, `/files/{rest:path}`) as an anchored regular expression over raw paths. */
export function routeRegex(route: string): RegExp {
  let rx = regexCache.get(route);
  if (!rx) {
    const parts = route.split('/').map((seg) => {
      const m = PLACEHOLDER.exec(seg);
      if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return m[1] === 'path' ? '.+' : '[^/]+';
    });
    rx = new RegExp(`^${parts.join('/')}$`);
    regexCache.set(route, rx);
  }
  return rx;
}

const pathOf = (c: ConformanceCase) => c.request.path.split('?', 1)[0]!;
const methodOf = (m: string) => m.toUpperCase();

/** Does the case's request go to `route` under `method` (HEAD is served by a GET route, RFC 9110 §9.3.2)? */
function requestHits(c: ConformanceCase, method: string, route: string): boolean {
  const sent = methodOf(c.request.method);
  const m = methodOf(method);
  return (sent === m || (sent === 'HEAD' && m === 'GET')) && routeRegex(route).test(pathOf(c));
}

/**
 * True when the case's expected answer depends on what else its server serves (see the module
 * comment): it must be served with nothing but its own handler definition.
 */
export function dependsOnServerShape(c: ConformanceCase): boolean {
  if (SHAPE_STATUSES.has(c.expected.status_code)) return true;
  if (Object.keys(c.expected.headers ?? {}).some((h) => h.toLowerCase() === 'allow')) return true;
  return methodOf(c.request.method) !== methodOf(c.handler.method) || !routeRegex(c.handler.route).test(pathOf(c));
}

function isStateful(c: ConformanceCase): boolean {
  return c.handler.middleware?.rate_limit !== undefined;
}

interface Group {
  cases: ConformanceCase[];
  /** Handler definitions by routeKey. */
  defs: Map<string, string>;
  /** A rate-limited case: nothing else joins. */
  single: boolean;
  /** Holds a shape-dependent case: only cases of this one handler definition join. */
  exclusive?: string;
}

/** May `c` (handler definition `def`) join `g` under route grouping without changing a verdict? */
function fits(g: Group, c: ConformanceCase, def: string, shaped: boolean): boolean {
  if (g.single) return false;
  if (g.exclusive !== undefined) return g.exclusive === def;
  if (shaped) return g.cases.every((x) => JSON.stringify(x.handler) === def);
  const key = routeKey(c.handler.method, c.handler.route);
  if (g.defs.has(key) && g.defs.get(key) !== def) return false;
  // No other definition in the group may take this case's request, nor this one another case's.
  for (const other of g.cases) {
    if (JSON.stringify(other.handler) === def) continue;
    if (requestHits(c, other.handler.method, other.handler.route) || requestHits(other, c.handler.method, c.handler.route)) return false;
  }
  return true;
}

/** Split cases into server groups (see the module comment); order within a group is kept. */
export function planGroups(cases: readonly ConformanceCase[], grouping: ExecGrouping = 'route'): ConformanceCase[][] {
  if (grouping === 'case') return cases.map((c) => [c]);
  const groups: Group[] = [];
  for (const c of cases) {
    const def = JSON.stringify(c.handler);
    const key = routeKey(c.handler.method, c.handler.route);
    const alone = isStateful(c);
    const shaped = dependsOnServerShape(c);
    let g = alone ? undefined : groups.find((x) => !x.single && (grouping === 'handler' ? x.defs.get(key) === def : fits(x, c, def, shaped)));
    if (!g) {
      g = { cases: [], defs: new Map(), single: alone };
      groups.push(g);
    }
    if (grouping === 'route' && shaped) g.exclusive = def;
    g.cases.push(c);
    g.defs.set(key, def);
  }
  return groups.map((g) => g.cases);
}

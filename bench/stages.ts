/**
 * Stage attribution: where a benchmark server spends its CPU, from its V8 .cpuprofile
 * (`npm run bench -- --profile`). Each sample's self time goes to one *stage* (socket I/O, HTTP
 * parsing, validation, …) through the data table in stage-rules.ts, and each stage is expressed as
 * µs per request served, so servers that handled different numbers of requests compare directly.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyStack, isStartupFrame, IDLE, STARTUP, type Frame } from './stage-rules.js';

export { STAGE_RULES, FALLBACK, IDLE, PROGRAM, STARTUP, classifyStack, stageOf, type Frame, type StageRule } from './stage-rules.js';

/** The subset of V8's Profiler.Profile that attribution reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** One of the functions with the most self time, for pointing a reader at the code. */
export interface TopFunction {
  stage: string;
  fn: string;
  /** Normalised location, `lib/http/content.js:12` (line 1-based), empty for native code. */
  where: string;
  us: number;
}

/** One server's profile, attributed. Times per request are µs of main-thread self time. */
export interface PeerStages {
  /** The .cpuprofile this came from (relative to the working directory when inside it). */
  profile: string;
  /** Requests the server answered while profiled (probe, warm-up and rounds). */
  requests: number;
  /** Stage → µs per request; start-up and idle are not in here. */
  perRequest: Record<string, number>;
  /** Sum of perRequest: the main thread's busy time per request. */
  busyPerRequest: number;
  /** Module loading and everything before the first request, ms (once per process, not per request). */
  startupMs: number;
  /** Everything after the last request (flushing logs, exiting), ms: not per request either. */
  shutdownMs: number;
  /** Functions with the most self time per request, largest first. */
  top: TopFunction[];
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A frame's URL as a short, machine-independent location: `lib/http/content.js`, `middleware/cors/index.ts`,
 * `node_modules/fastify/lib/reply.js`, `node:_http_server`, or '' for native code. The compiled
 * benchmark build lives under node_modules/.cache/keel-bench, and it is keel's code, not a dependency.
 */
export function normaliseUrl(url: string, root = repoRoot): string {
  if (!url || url.startsWith('node:')) return url;
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const build = path.lastIndexOf('/node_modules/.cache/keel-bench/');
  if (build >= 0) return path.slice(build + '/node_modules/.cache/keel-bench/'.length);
  const dep = path.lastIndexOf('/node_modules/');
  if (dep >= 0) return path.slice(dep + 1);
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Attribute a profile. `requests` is what the server answered during the profile; the result's
 * per-request figures divide by it. Start-up is every sample before the first one inside node's
 * HTTP server (the first request), plus any later sample under the module loader (lazy imports);
 * shut-down is every sample after the last one there.
 */
export function attribute(profile: CpuProfile, requests: number, opts: { root?: string; file?: string; topCount?: number } = {}): PeerStages {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frameCache = new Map<number, Frame>();
  const frame = (id: number): Frame => {
    let f = frameCache.get(id);
    if (!f) {
      const cf = byId.get(id)!.callFrame;
      f = { name: cf.functionName, url: normaliseUrl(cf.url, opts.root), line: cf.lineNumber + 1 };
      frameCache.set(id, f);
    }
    return f;
  };
  const stackOf = (leaf: number): Frame[] => {
    const out: Frame[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) out.push(frame(id));
    return out;
  };
  // A node's stage depends only on its stack, so classify each node once, not each sample.
  const stageCache = new Map<number, string>();
  const stageOfNode = (id: number): string => {
    let s = stageCache.get(id);
    if (s === undefined) {
      const stack = stackOf(id);
      s = stack.some(isStartupFrame) ? STARTUP : classifyStack(stack);
      stageCache.set(id, s);
    }
    return s;
  };

  const inHttpCache = new Map<number, boolean>();
  const inHttp = (id: number) => {
    let v = inHttpCache.get(id);
    if (v === undefined) inHttpCache.set(id, (v = byId.has(id) && stackOf(id).some((f) => f.url.startsWith('node:_http_'))));
    return v;
  };
  const first = profile.samples.findIndex(inHttp);
  const last = profile.samples.findLastIndex(inHttp);
  let startupUs = 0;
  let shutdownUs = 0;
  const stageUs = new Map<string, number>();
  const fnUs = new Map<string, { stage: string; fn: string; where: string; us: number }>();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    if (!byId.has(id)) return;
    const stage = stageOfNode(id);
    if (stage === IDLE) return;
    if (i > last && first >= 0) {
      shutdownUs += dt;
      return;
    }
    if (i < first || first < 0 || stage === STARTUP) {
      startupUs += dt;
      return;
    }
    stageUs.set(stage, (stageUs.get(stage) ?? 0) + dt);
    const f = frame(id);
    const where = f.url ? `${f.url}:${f.line}` : '';
    const key = `${f.name}\0${where}`;
    const entry = fnUs.get(key) ?? { stage, fn: f.name || '(anonymous)', where, us: 0 };
    entry.us += dt;
    fnUs.set(key, entry);
  });

  const n = Math.max(requests, 1);
  const perRequest: Record<string, number> = {};
  for (const [stage, us] of [...stageUs].sort((a, b) => b[1] - a[1])) perRequest[stage] = round3(us / n);
  const top = [...fnUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, opts.topCount ?? 40)
    .map((t) => ({ ...t, us: round3(t.us / n) }));
  return {
    profile: opts.file ?? '',
    requests,
    perRequest,
    busyPerRequest: round3([...stageUs.values()].reduce((a, b) => a + b, 0) / n),
    startupMs: Math.round(startupUs / 100) / 10,
    shutdownMs: Math.round(shutdownUs / 100) / 10,
    top,
  };
}

/**
 * The main-thread profile a server process wrote: node names them
 * `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`, and the main thread is thread 0. Several
 * runs share a folder, so the process id picks this run's file.
 */
export function findProfile(dir: string, pid: number): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const mine = names.filter((f) => {
    const parts = f.split('.');
    return f.endsWith('.cpuprofile') && parts[3] === String(pid) && parts[4] === '0';
  });
  return mine.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** Read and attribute one profile file; the result names the file relative to the working directory when inside it. */
export function attributeFile(file: string, requests: number): PeerStages {
  const rel = relative(process.cwd(), file);
  return attribute(readProfile(file), requests, { file: rel.startsWith('..') || isAbsolute(rel) ? file : rel });
}

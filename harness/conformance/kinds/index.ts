/**
 * The protocol kinds (one module each) and the three places they plug in: the loader (a corpus
 * document becomes ProtocolCases), the runner (a ProtocolCase is played by its kind), keel's fixture
 * app (its kind serves it). Kinds are tried in order; the first that recognises a document takes it.
 */
import { missingPackages, missingPackagesError } from '../../../lib/ops/packages.js';
import type { Mismatch } from '../compare.js';
import type { LoadedCase, ProtocolCase, ProtocolKind, RunnableCase } from '../types.js';
import { graphqlLoader } from './graphql-spec.js';
import { apiDocsLoader } from './api-docs-spec.js';
import { grpcLoader } from './grpc-spec.js';
import { jsonrpcLoader } from './jsonrpc-spec.js';
import type { Json, KindLoad, KindLoader, KindRuntime } from './kind.js';

/** The runner's CaseTarget, as far as a protocol case uses it (declared here: the runner imports this module). */
export interface ProtocolTarget {
  baseUrl: string;
  explain?: (err: Error) => Promise<Error | undefined>;
  release?: () => void | Promise<void>;
}

/** The runner's options, as far as a protocol case uses them. */
export interface ProtocolRunOptions {
  target: string | URL | ((c: RunnableCase) => Promise<ProtocolTarget>);
  timeoutMs?: number;
}

/** The runner's CaseResult of a protocol case. */
export interface ProtocolResult {
  id: string;
  category: string;
  name: string;
  source: string;
  status: 'passed' | 'failed';
  mismatches: Mismatch[];
  error?: string;
  request?: { method: string; path: string; headers: Array<[string, string]> };
  expected?: { status_code: number; body?: unknown };
  actual?: { status: number; headers: Record<string, string>; body: unknown };
  durationMs: number;
}

export const KINDS: readonly KindLoader[] = [grpcLoader, graphqlLoader, jsonrpcLoader, apiDocsLoader];

/**
 * The packages each kind's runtime (kinds/<kind>.ts: the runner's client, and what builds keel's fixture) imports:
 * the runner's gRPC client is not a dependency of keel's server (keel speaks HTTP/2 itself).
 */
export const KIND_RUNTIME_PACKAGES: Readonly<Record<ProtocolKind, readonly string[]>> = {
  grpc: ['@grpc/grpc-js@1', 'protobufjs'],
  graphql: ['graphql@16'],
  jsonrpc: [],
  'api-description': [],
};

/** Each kind's client and fixture, imported when a case of it runs. */
const RUNTIMES: Record<ProtocolKind, () => Promise<KindRuntime>> = {
  grpc: async () => {
    const missing = missingPackages(KIND_RUNTIME_PACKAGES.grpc);
    if (missing.length) throw missingPackagesError('gRPC conformance cases (keel-conformance)', missing);
    return (await import('./grpc.js')).grpcRuntime;
  },
  graphql: async () => {
    const missing = missingPackages(KIND_RUNTIME_PACKAGES.graphql);
    if (missing.length) throw missingPackagesError('GraphQL conformance cases (keel-conformance)', missing);
    return (await import('./graphql.js')).graphqlRuntime;
  },
  jsonrpc: async () => (await import('./jsonrpc.js')).jsonrpcRuntime,
  'api-description': async () => (await import('./api-docs.js')).apiDocsRuntime,
};

function kindOf(name: ProtocolKind): Promise<KindRuntime> {
  return RUNTIMES[name]();
}

/**
 * The cases of a document of another protocol, or undefined when no kind recognises it. A kind may
 * make several cases of one document (a JSON-RPC method's examples): their ids get `/<suffix>`.
 */
export function loadProtocol(doc: unknown, base: { id: string; category: string; source: string }): LoadedCase[] | undefined {
  for (const kind of KINDS) {
    const loaded = kind.load(doc, base.category);
    if (loaded === undefined) continue;
    const list: KindLoad[] = Array.isArray(loaded) ? loaded : [loaded];
    return list.map((l, i) => {
      const id = list.length > 1 || l.suffix ? `${base.id}/${l.suffix ?? i}` : base.id;
      if ('skip' in l) return { ...base, id, skip: `${kind.kind} case not sent: ${l.skip}` };
      const c: ProtocolCase = { ...base, id, kind: kind.kind, name: l.name ?? id, ...(l.description ? { description: l.description } : {}), spec: l.spec };
      return c;
    });
  }
  return undefined;
}

/** What a server is told about a protocol case (the manifest's `protocols[].server`). */
export function protocolServerSpec(c: ProtocolCase): Json {
  const k = KINDS.find((x) => x.kind === c.kind);
  if (!k) throw new Error(`no protocol kind ${c.kind}`);
  return k.server(c.spec);
}

/** Play one protocol case against its target (a base URL or a per-case factory). */
export async function runProtocolCase(c: ProtocolCase, options: ProtocolRunOptions, caseHeader: string | false): Promise<ProtocolResult> {
  const started = performance.now();
  const base = { id: c.id, category: c.category, name: c.name, source: c.source };
  let target: ProtocolTarget | undefined;
  try {
    target = typeof options.target === 'function' ? await options.target(c) : { baseUrl: String(options.target) };
    const outcome = await (await kindOf(c.kind)).play(c.spec, target.baseUrl, { timeoutMs: options.timeoutMs ?? 10_000, ...(caseHeader ? { caseHeader: [caseHeader, c.id] as [string, string] } : {}) });
    const request = { method: c.kind, path: outcome.sent.join('\n'), headers: [] as Array<[string, string]> };
    const status: ProtocolResult['status'] = outcome.error || outcome.mismatches.length ? 'failed' : 'passed';
    return {
      ...base, status, mismatches: outcome.mismatches, request, durationMs: performance.now() - started,
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(outcome.expected !== undefined ? { expected: { status_code: 0, body: outcome.expected } } : {}),
      ...(outcome.actual !== undefined ? { actual: { status: 0, headers: {}, body: outcome.actual } } : {}),
    };
  } catch (err) {
    const e = (await target?.explain?.(err as Error)) || (err as Error);
    return { ...base, status: 'failed', mismatches: [], error: `${e.name}: ${e.message}`, durationMs: performance.now() - started };
  } finally {
    await target?.release?.();
  }
}

/** keel's fixture app for one protocol case, as a runner target. */
export async function protocolFixtureTarget(c: ProtocolCase): Promise<ProtocolTarget> {
  const served = await (await kindOf(c.kind)).serve(c.spec);
  return { baseUrl: served.url, release: () => served.close() };
}

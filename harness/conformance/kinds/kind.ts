/**
 * The interface every protocol kind implements (GraphQL, gRPC, JSON-RPC, API descriptions): how a
 * corpus document becomes a case, how the runner plays it as a client, how keel's fixture app serves
 * it. The runner and the fixture app know kinds only through this interface (kinds/index.ts).
 */
import type { Mismatch } from '../compare.js';
import type { ProtocolKind } from '../types.js';

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What playing one case gave: the differences, and what was sent and received (for reports). */
export interface KindOutcome {
  mismatches: Mismatch[];
  /** Transport failure (no answer, refused). */
  error?: string;
  /** One line per request sent (`POST /graphql`, `gRPC example.v1.Svc/Method`). */
  sent: string[];
  expected?: unknown;
  actual?: unknown;
}

/** A running server for one case (keel's fixture app, or an implementation under --exec). */
export interface KindServer {
  url: string;
  close(): Promise<void>;
}

export interface PlayOptions {
  timeoutMs: number;
  /** The case-id header (name, value) sent with every request, if any. */
  caseHeader?: [string, string];
}

/** A loaded document of this kind: its spec, or why it cannot be sent. */
export type KindLoad = ({ spec: Json; name?: string; description?: string } | { skip: string }) & { suffix?: string };

/**
 * How a kind recognises its documents: cheap, so loading cases never loads a protocol's client or
 * keel's server (the kind's runtime, KindRuntime, is imported by kinds/index.ts when a case of it runs).
 */
export interface KindLoader {
  kind: ProtocolKind;
  /** The document's spec if it is of this kind (undefined: not this kind). */
  load(doc: unknown, category: string): KindLoad | KindLoad[] | undefined;
  /**
   * What a server is told about a case (the manifest's `protocol.server`): the handler's own data,
   * never an answer the framework owns (validation errors, protocol errors, deadlines).
   */
  server(spec: Json): Json;
}

export interface KindRuntime {
  /** Send the case to `baseUrl` and compare. */
  play(spec: Json, baseUrl: string, options: PlayOptions): Promise<KindOutcome>;
  /** keel's fixture app for this case, listening on loopback. */
  serve(spec: Json): Promise<KindServer>;
}

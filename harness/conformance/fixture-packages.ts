/**
 * The optional peer dependencies keel's fixture app needs for a case, and the cases it cannot serve
 * in this installation. keel's protocols load their packages only when used (package.json
 * peerDependenciesMeta: optional), so a project that runs `keel-conformance` may well lack `ws`,
 * `graphql` or protobufjs. Such a case is skipped, saying which packages and the command that
 * installs them, rather than failing (keel does conform; the installation cannot show it) or
 * stopping the run (every other case can still run). Other implementations (--exec, --base-url) are
 * not concerned: their server is theirs, and the runner's own clients say what they lack when used.
 */
import { PROTOCOLS } from '../../lib/app/builtins.js';
import { missingPackages } from '../../lib/ops/packages.js';
import { isGraphqlSession, websocketEnabled } from './fixture-ws.js';
import { KIND_RUNTIME_PACKAGES } from './kinds/index.js';
import { isProtocolCase, isRunnable, isWebSocketCase, type LoadedCase, type ProtocolKind } from './types.js';

/** What keel's fixture app (keel's protocol) and the kind's runtime (its client) need to serve a protocol case. */
const KIND_PACKAGES: Readonly<Record<ProtocolKind, readonly string[]>> = {
  grpc: [...PROTOCOLS.grpc.packages, ...KIND_RUNTIME_PACKAGES.grpc],
  graphql: [...PROTOCOLS.graphql.packages, ...KIND_RUNTIME_PACKAGES.graphql],
  jsonrpc: [...PROTOCOLS.jsonrpc.packages, ...KIND_RUNTIME_PACKAGES.jsonrpc],
  'api-description': [...PROTOCOLS.openapi.packages, ...PROTOCOLS.asyncapi.packages, ...KIND_RUNTIME_PACKAGES['api-description']],
};

/** The packages keel's fixture app needs to serve `c` (empty for plain HTTP cases). */
export function fixturePackages(c: LoadedCase): readonly string[] {
  if (isWebSocketCase(c)) return isGraphqlSession(c) ? PROTOCOLS.graphql.packages : PROTOCOLS.ws.packages;
  if (isProtocolCase(c)) return KIND_PACKAGES[c.kind];
  if (!isRunnable(c)) return [];
  try {
    return websocketEnabled(c.handler) ? PROTOCOLS.ws.packages : [];
  } catch {
    return []; // a malformed websocket record: building the case reports it, with its name
  }
}

/**
 * `cases` with those keel's fixture app cannot serve here marked skipped (the packages and the
 * install command in the reason); `missing` lists every package lacking, for one notice.
 */
export function skipWithoutPackages(cases: readonly LoadedCase[]): { cases: LoadedCase[]; missing: string[] } {
  const lacking = new Map<string, boolean>();
  const isMissing = (spec: string): boolean => {
    let m = lacking.get(spec);
    if (m === undefined) lacking.set(spec, (m = missingPackages([spec]).length > 0));
    return m;
  };
  const all = new Set<string>();
  const out = cases.map((c) => {
    if ((c as { skip?: string }).skip !== undefined) return c;
    const missing = fixturePackages(c).filter(isMissing);
    if (!missing.length) return c;
    for (const spec of missing) all.add(spec);
    return { ...c, skip: `keel's fixture app needs ${missing.join(', ')} to serve this case (optional peer dependencies of keel, not installed): npm install ${missing.join(' ')}` } as LoadedCase;
  });
  return { cases: out, missing: [...all] };
}

/**
 * Loading conformance cases from both corpus layouts:
 * - `<category>/NN_name.json`: one case per file (`schema.json` files and JSON Schemas are not cases);
 * - `<category>.json`: an array of `{id, category, description, http: {handler, request, expected_response}, skip?}`.
 * WebSocket session cases (`websocket: {handler, session}`) and WebSocket channel documents are
 * loaded as WebSocketCases (loader-ws.ts); documents of other protocols (GraphQL, protobuf/gRPC,
 * JSON-RPC, API descriptions) as ProtocolCases by their kind (kinds/). What no client can send (SSE
 * channel documents, prose-only request streams, out-of-scope features) is loaded as skipped with the
 * reason, so the report counts it instead of hiding it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { loadProtocol } from './kinds/index.js';
import type { CaseExpectedResponse, CaseHandler, CaseRequest, ConformanceCase, LoadedCase } from './types.js';
import { channelDocument, corpusSkip, RUNNER_LANGUAGE, toWebSocketCase } from './loader-ws.js';

export { RUNNER_LANGUAGE };

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why a document that is not an HTTP case is out of scope. */
function outOfScopeReason(doc: Json, category: string): string {
  if ('protobuf' in doc) return 'protobuf/gRPC case (not an HTTP request/response case)';
  if ('openrpc' in doc || 'openapi' in doc || 'asyncapi' in doc) return 'API description document (not an HTTP request/response case)';
  if ('operation_type' in doc || category.startsWith('graphql')) return 'GraphQL document (not an HTTP request/response case)';
  if ('method' in doc || 'params_schema' in doc || category.startsWith('jsonrpc')) return 'JSON-RPC method document (not an HTTP request/response case)';
  if (category === 'websockets' || category === 'sse' || 'channel' in doc) return `${category} message document without a channel or protocol: there is no address a client could send it to`;
  return 'not an HTTP request/response case (no handler.route, request.path and expected_response.status_code)';
}

/**
 * Words (category, tag) naming dependency injection; a tag containing `dependency_injection` counts
 * too. Not `dependencies`: the corpus tags JSON Schema's `dependencies` keyword cases so.
 */
const DI_WORDS: readonly string[] = ['di', 'dependency_injection', 'dependency-injection'];
/** Words (category, tag) naming SQL / database access. */
const SQL_WORDS: readonly string[] = ['sql', 'database', 'db', 'databases'];

/**
 * Why a case needs a feature outside the specification's scope, if it does: dependency injection and
 * SQL/database access, recognised by the handler's fields (`handler.dependencies`, the corpus schema's
 * DI configuration; `sql`/`database`), by the case's category, or by its tags, so that cases the
 * runner has never seen are recognised the same way.
 */
export function outOfSpecScope(handler: Json, doc: Json, category = ''): string | undefined {
  const tags = Array.isArray(doc.tags) ? doc.tags.map((t) => String(t).toLowerCase()) : [];
  const cat = category.toLowerCase();
  if (isObject(handler.dependencies) && Object.keys(handler.dependencies).length > 0) {
    return 'outside the specification: dependency injection (handler.dependencies)';
  }
  if (DI_WORDS.includes(cat)) return `outside the specification: dependency injection (category ${JSON.stringify(category)})`;
  const diTag = tags.find((t) => DI_WORDS.includes(t) || t.includes('dependency_injection'));
  if (diTag) return `outside the specification: dependency injection (tag ${JSON.stringify(diTag)})`;
  if ('sql' in handler || 'database' in handler) return 'outside the specification: SQL / database access';
  if (SQL_WORDS.includes(cat)) return `outside the specification: SQL / database access (category ${JSON.stringify(category)})`;
  const sqlTag = tags.find((t) => SQL_WORDS.includes(t));
  if (sqlTag) return `outside the specification: SQL / database access (tag ${JSON.stringify(sqlTag)})`;
  return undefined;
}

/**
 * The handler a case without one implies: a request and an expected response but no
 * `handler.route` (content types, status codes, CORS answers) are served by a route at the
 * request's own path (its query dropped, taken literally: no placeholders) for the request's method.
 */
function impliedHandler(request: unknown, expected: unknown): Json | undefined {
  if (!isObject(request) || typeof request.path !== 'string' || !request.path.startsWith('/') || !isObject(expected) || typeof expected.status_code !== 'number') return undefined;
  const path = request.path.split('?', 1)[0]!;
  // A literal path with braces would read as a placeholder: escape nothing, refuse it instead.
  if (/[{}]/.test(path)) return undefined;
  return { route: path, method: typeof request.method === 'string' ? request.method.toUpperCase() : 'GET', implied: true };
}

/**
 * Normalise one case object of either layout. A document of another protocol may make several cases
 * (a JSON-RPC method's examples and error cases: kinds/); `toCase` gives the first, `toCases` all.
 */
export function toCase(doc: unknown, info: { id: string; category: string; source: string }): LoadedCase {
  const cases = toCases(doc, info);
  return Array.isArray(cases) ? cases[0]! : cases;
}

/** Every case of one case object (see toCase). */
export function toCases(doc: unknown, info: { id: string; category: string; source: string }): LoadedCase | LoadedCase[] {
  if (!isObject(doc)) return { ...info, skip: 'not a JSON object' };
  const category = typeof doc.category === 'string' && doc.category ? doc.category : info.category;
  if (isObject(doc.websocket) && ('session' in doc.websocket || 'handler' in doc.websocket)) return toWebSocketCase(doc, { id: info.id, category, source: info.source });
  const base = { id: info.id, category, source: info.source };
  const channel = channelDocument(doc, base);
  if (channel) return channel;
  const protocol = loadProtocol(doc, base);
  if (protocol) return protocol.length === 1 ? protocol[0]! : protocol;
  const http = isObject(doc.http) ? doc.http : doc;
  const handler = isObject(http.handler) ? http.handler : impliedHandler(http.request, http.expected_response);
  const request = http.request;
  const expected = http.expected_response;
  if (!isObject(handler) || typeof handler.route !== 'string' || !isObject(request) || typeof request.path !== 'string' || !isObject(expected) || typeof expected.status_code !== 'number') {
    return { ...base, skip: outOfScopeReason(doc, category) };
  }
  const extra: Json = {};
  for (const key of ['streaming', 'background']) if (key in doc) extra[key] = doc[key];
  const c: ConformanceCase = {
    ...base,
    name: typeof doc.name === 'string' ? doc.name : info.id,
    ...(typeof doc.description === 'string' ? { description: doc.description } : {}),
    handler: handler as CaseHandler,
    request: { method: (handler.method as string) ?? 'GET', ...request } as CaseRequest,
    expected: expected as CaseExpectedResponse,
    extra,
  };
  const outOfScope = outOfSpecScope(handler, doc, category);
  if (outOfScope) c.skip = outOfScope;
  const skip = corpusSkip(doc);
  if (skip && !outOfScope) Object.assign(c, { skip, implementationSkip: true });
  return c;
}

/**
 * The cases as another implementation runs them (`--exec`, `--base-url`, `--manifest`): the corpus's
 * skips for Node implementations (`skip.languages`, e.g. "TRACE not supported by fetch in Node.js")
 * are about keel's own fixture app, not the runner (which sends TRACE with node:http), so they are
 * lifted; every other skip stays.
 */
export function forAnyImplementation(cases: readonly LoadedCase[]): LoadedCase[] {
  return cases.map((c) => {
    if (!('implementationSkip' in c) || !c.implementationSkip) return c;
    const { skip: _skip, implementationSkip: _impl, ...rest } = c;
    return rest as LoadedCase;
  });
}

function isJsonSchemaDocument(doc: unknown): boolean {
  return isObject(doc) && typeof doc.$schema === 'string' && !('request' in doc) && !('http' in doc);
}

/**
 * Cases of one file. `idBase` is the id prefix: the file's path relative to the directory given
 * to `loadCases` (without `.json`), or `<parent dir>/<stem>` for a file given directly.
 */
export function loadFile(file: string, idBase: string, category = basename(dirname(file))): LoadedCase[] {
  if (basename(file) === 'schema.json') return [];
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (isJsonSchemaDocument(doc)) return [];
  const stem = basename(file, '.json');
  if (Array.isArray(doc)) {
    const prefix = idBase.slice(0, idBase.length - stem.length);
    return doc.map((item, i) => {
      const caseId = isObject(item) && typeof item.id === 'string' ? item.id : String(i);
      const category = isObject(item) && typeof item.category === 'string' ? item.category : stem;
      return toCases(item, { id: `${prefix}${stem}/${caseId}`, category, source: `${file}#${i}` });
    }).flat();
  }
  return [toCases(doc, { id: idBase, category, source: file })].flat();
}

/** True when a file holds an array of cases (the `fixtures/<category>.json` layout). */
function isArrayFile(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').trimStart().startsWith('[');
  } catch {
    return false;
  }
}

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.json')) out.push(p);
  }
}

/** Folder names of the corpus's two layouts; ids keep them so both layouts load side by side. */
export const LAYOUTS: readonly string[] = ['testing_data', 'fixtures'];

/**
 * The id prefix of a directory given on the command line: `testing_data/` or `fixtures/` when it is
 * a layout folder, `<layout>/<category>/` when it is a category folder inside one, else nothing.
 */
function directoryPrefix(dir: string): string {
  const abs = resolve(dir);
  const name = basename(abs);
  if (LAYOUTS.includes(name)) return `${name}/`;
  // Category folders exist only in testing_data (fixtures/ holds flat array files), so a folder
  // such as keel's test/fixtures/conformance is not mistaken for a corpus category.
  const parent = basename(dirname(abs));
  if (parent === 'testing_data') return `${parent}/${name}/`;
  return '';
}

/** The id base of a file given on the command line (same ids as when its directory is given). */
function fileIdBase(file: string): string {
  const abs = resolve(file);
  const stem = basename(abs, '.json');
  const parent = basename(dirname(abs));
  if (LAYOUTS.includes(parent)) return `${parent}/${stem}`;
  const grand = basename(dirname(dirname(abs)));
  if (grand === 'testing_data') return `${grand}/${parent}/${stem}`;
  return `${parent}/${stem}`;
}

/**
 * The layout folders (`testing_data`, `fixtures`) of the corpora the given paths lie in: a path that
 * is a corpus (holds `testing_data/`), or lies inside one's layout folder, names that corpus. Paths
 * outside any corpus (keel's own cases) name none. Used to read a contradiction's other case from the
 * whole corpus when only part of it is given.
 */
export function corpusLayoutDirs(paths: readonly string[]): string[] {
  const out = new Set<string>();
  const isCorpus = (d: string) => existsSync(join(d, 'testing_data')) && statSync(join(d, 'testing_data')).isDirectory();
  for (const p of paths) {
    let dir = resolve(p);
    let root: string | undefined;
    if (isCorpus(dir)) root = dir;
    for (let d = dir; !root && dirname(d) !== d; d = dirname(d)) if (LAYOUTS.includes(basename(d)) && isCorpus(dirname(d))) root = dirname(d);
    if (root) for (const l of LAYOUTS) if (existsSync(join(root, l))) out.add(join(root, l));
  }
  return [...out];
}

/**
 * Load every case under the given files and directories. Ids are the path below the directory
 * given, prefixed by the corpus layout it lies in, so the same case has the same id however it is
 * passed: `corpus`, `corpus/testing_data` and `corpus/testing_data/query_params` all give
 * `testing_data/query_params/01_required_string_success`; `corpus/fixtures` gives
 * `fixtures/auth/jwt_authentication_valid_token`. Outside the layouts (keel's own cases) ids are
 * relative to the directory. Duplicate ids are an error (the expectation list is keyed by id).
 */
export function loadCases(paths: readonly string[]): LoadedCase[] {
  const cases: LoadedCase[] = [];
  const seen = new Map<string, string>();
  for (const p of paths) {
    const files: Array<[string, string, string | undefined]> = [];
    if (statSync(p).isDirectory()) {
      const list: string[] = [];
      walk(p, list);
      const prefix = directoryPrefix(p);
      const prefixDirs = prefix.split('/').filter(Boolean);
      for (const f of list) {
        const rel = relative(p, f).slice(0, -'.json'.length).split(sep);
        // Nested folders (testing_data/graphql/queries/...) belong to their top-level category.
        const dirs = [...prefixDirs, ...rel.slice(0, -1)].filter((d) => !LAYOUTS.includes(d));
        // A category folder given directly (keel's test/fixtures/conformance/cors) keeps its name in
        // the ids of its one-case files, as when its parent is given; array files name their own category.
        const own = !prefix && rel.length === 1 && !LAYOUTS.includes(basename(resolve(p))) && !isArrayFile(f) ? `${basename(resolve(p))}/` : '';
        files.push([f, prefix + own + rel.join('/'), dirs[0]]);
      }
    } else {
      files.push([p, fileIdBase(p), undefined]);
    }
    for (const [file, idBase, category] of files) {
      for (const c of loadFile(file, idBase, category)) {
        const prev = seen.get(c.id);
        if (prev) throw new Error(`Duplicate case id "${c.id}" in ${c.source} (also in ${prev})`);
        seen.set(c.id, c.source);
        cases.push(c);
      }
    }
  }
  return cases;
}

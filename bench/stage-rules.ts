/**
 * The table that maps a profile frame to a stage, and the walk that applies it to a sample's stack.
 *
 * A sample's self time belongs to the frame on top of the stack, but that frame is often generic
 * (a stream method, an event emit, a native helper): its cost was caused by whoever called it. So
 * rules are *strong* (the frame says what the work is: `lib/http/validation.js`, `node:_http_server`,
 * `writev`) or *weak* (generic code); a sample goes to the strong rule nearest the top of its stack,
 * else to the nearest weak one. `Readable.on` called by lib/http/body is body reading; the same call
 * from Fastify's content-type parser is Fastify's.
 *
 * Locations are normalised first (stages.ts): `lib/http/content.js`, `middleware/cors/index.js`,
 * `node_modules/fastify/lib/reply.js`, `node:_http_server`, '' for native code. Keel's sources
 * match both as .ts (under --tsx) and as the compiled .js the servers run by default.
 */

export interface Frame {
  name: string;
  url: string;
  line: number;
}

export interface StageRule {
  /** Stage name; `$1` is replaced by the url pattern's first group (middleware/<name>). */
  stage: string;
  url?: RegExp;
  name?: RegExp;
  /** Only native frames (no url): V8 pseudo-frames and C++ bindings. */
  native?: boolean;
  /** Generic code: used only when no strong rule matches closer to the caller's side. */
  weak?: boolean;
  /** Only when a frame further down the stack (a caller) has a url matching this. */
  within?: RegExp;
}

export const IDLE = 'idle';
/** V8's own work outside any JS function: compiler, runtime, native code with no frame. */
export const PROGRAM = 'V8 (program)';
export const FALLBACK = 'other JS';
/** A native helper (Buffer, microtask runner, …) with nothing more telling on its stack. */
const NATIVE = 'native (unattributed)';
/** Reported apart from the per-request stages: it is paid once per process. */
export const STARTUP = 'module loading (start-up)';

// Stage names are short because the report prints them in sentences ("validation +9 µs"); what each
// covers is the rules below.
const SOCKET = 'socket I/O';
const HTTP = 'HTTP parsing/writing';
const ROUTING = 'routing';
const PIPELINE = 'keel pipeline';
const VALIDATION = 'validation';
const BODY = 'body reading/parsing';
const QUERY = 'URL/query parsing';
const SERIAL = 'serialisation';
const CRYPTO = 'crypto/JWT';
const GRAPHQL = 'GraphQL';
const JSONRPC = 'JSON-RPC';
/** Streams, events, ticks and timers with no more specific caller on the stack. */
const RUNTIME = 'Node runtime';
/** The server's RSS sampler and IPC with the runner (bench/server.ts): the same in every peer. */
const HARNESS = 'benchmark harness';

/** First match wins; order specific rules before general ones. */
export const STAGE_RULES: readonly StageRule[] = [
  // V8's pseudo-frames.
  { native: true, name: /^\(idle\)$/, stage: IDLE },
  { native: true, name: /^\(garbage collector\)$/, stage: 'GC' },
  { native: true, name: /^\(program\)$/, stage: PROGRAM },
  // Native bindings that name their work. JSON.parse/stringify run inside their JS caller's frame
  // (V8 shows no frame for them), so serialisation is found by the caller below.
  { native: true, name: /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString|writeUcs2String|readStart|readStop|shutdown)$/, stage: SOCKET },
  { native: true, name: /^validate\d*$/, stage: VALIDATION }, // Ajv's generated code has no url
  { native: true, stage: NATIVE, weak: true },

  // Module loading: start-up, reported apart (stages.ts checks the whole stack).
  { url: /^node:internal\/(modules|bootstrap)\//, stage: STARTUP },

  // Node's own modules.
  { url: /^node:_http_/, stage: HTTP },
  { url: /^node:(net|internal\/net|internal\/stream_base_commons|internal\/js_stream_socket)$/, stage: SOCKET },
  { url: /^node:(zlib|internal\/zlib)/, stage: 'zlib' },
  { url: /^node:(crypto|internal\/crypto\/)/, stage: CRYPTO },
  { url: /^node:(url|internal\/url|querystring|internal\/querystring)$/, stage: QUERY },
  // fs callbacks run from the event loop, with no caller on the stack that says who opened the file.
  { url: /^node:(fs|internal\/fs\/)/, stage: 'file I/O (node:fs)' },
  { url: /^node:/, stage: RUNTIME, weak: true },

  // keel: lib/ and one stage per middleware folder.
  { url: /^lib\/app\/respond\./, name: /^writeContent$/, stage: SERIAL }, // its self time is JSON.stringify
  { url: /^lib\/(?:app\/(?:pipeline|chain|request-data|respond|hooks|handler|features|builtins)|http\/(?:request|errors|problem))\./, stage: PIPELINE },
  { url: /^lib\/app\/(dispatch|router|route-definition)\./, stage: ROUTING },
  { url: /^lib\/http\/(validation|validation-errors|coerce)\./, stage: VALIDATION },
  { url: /^lib\/http\/(body|content|multipart)\./, stage: BODY },
  { url: /^lib\/http\/query\./, stage: QUERY },
  { url: /^lib\/jsonrpc\//, stage: JSONRPC },
  { url: /^lib\/graphql\//, stage: GRAPHQL },
  { url: /^lib\//, stage: 'keel (other lib/*)' },
  { url: /^middleware\/([^/]+)\//, stage: 'middleware/$1' },
  { url: /^bench\/peers\//, stage: 'app handler' },
  { url: /^bench\//, stage: HARNESS },

  // Dependencies. The peers' equivalents of keel's middleware share its stage names, so the
  // side-by-side table compares like with like.
  { url: /^node_modules\/(find-my-way|path-to-regexp)\//, stage: ROUTING },
  { url: /^node_modules\/(ajv|ajv-formats|fast-uri|@fastify\/ajv-compiler)\//, stage: VALIDATION },
  { url: /^node_modules\/(busboy|@fastify\/busboy|streamsearch|secure-json-parse|@fastify\/formbody|@fastify\/multipart|multer|body-parser|raw-body|content-type|fast-content-type-parse|iconv-lite|type-is|media-typer)\//, stage: BODY },
  // A urlencoded body goes through the same query-string parsers as a URL: it is body parsing then.
  { url: /^node_modules\/(fast-querystring|qs|fast-decode-uri-component)\//, within: /^(node_modules\/(@fastify\/formbody|body-parser)\/|lib\/http\/(body|content)\.)/, stage: BODY },
  { url: /^node_modules\/(fast-querystring|qs|parseurl|fast-decode-uri-component)\//, stage: QUERY },
  { url: /^node_modules\/(fast-json-stringify|@fastify\/fast-json-stringify-compiler|fast-safe-stringify)\//, stage: SERIAL },
  { url: /^node_modules\/fastify\/lib\/reply\./, name: /^serialize$/, stage: SERIAL }, // JSON.stringify
  { url: /^node_modules\/(jose|fast-jwt|jsonwebtoken|jws|jwa|@fastify\/jwt|express-jwt|express-unless)\//, stage: CRYPTO },
  { url: /^node_modules\/(graphql|graphql-http)\//, stage: GRAPHQL },
  { url: /^node_modules\/jayson\//, stage: JSONRPC },
  { url: /^node_modules\/(@fastify\/compress|compression|compressible|minipass)\//, stage: 'middleware/compression' },
  { url: /^node_modules\/(@fastify\/helmet|helmet)\//, stage: 'middleware/security-headers' },
  { url: /^node_modules\/(@fastify\/rate-limit|express-rate-limit|rate-limiter-flexible)\//, stage: 'middleware/rate-limit' },
  { url: /^node_modules\/(@fastify\/static|@fastify\/send|serve-static|send|etag|fresh|range-parser|mime|mime-types)\//, stage: 'middleware/static-files' },
  { url: /^node_modules\/cors\//, stage: 'middleware/cors' },
  { url: /^node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|abstract-logging)\//, stage: 'logging' },
  { url: /^node_modules\/(fastify|avvio|light-my-request|toad-cache|fastq|@fastify\/[^/]+)\//, stage: 'Fastify internals' },
  { url: /^node_modules\/(express|router|finalhandler)\//, stage: 'Express internals' },
  // Everything else, including the small helpers (on-finished, vary, http-errors, …) that send,
  // express and keel's middleware all use: charged to whichever of them called.
  { url: /^node_modules\//, stage: FALLBACK, weak: true },
  { url: /./, stage: FALLBACK, weak: true },
];

interface Match {
  stage: string;
  weak: boolean;
}

/** The rule for one frame given its callers (nearest first), or undefined when none applies (V8's `(root)`). */
export function stageOf(f: Frame, callers: readonly Frame[] = []): Match | undefined {
  if (f.name === '(root)' && !f.url) return undefined;
  for (const r of STAGE_RULES) {
    if (r.native && f.url) continue;
    if (r.url && !r.url.test(f.url)) continue;
    if (r.name && !r.name.test(f.name)) continue;
    if (r.within && !callers.some((c) => r.within!.test(c.url))) continue;
    const group = r.url?.exec(f.url)?.[1];
    return { stage: group === undefined ? r.stage : r.stage.replace('$1', group), weak: r.weak ?? false };
  }
  return undefined;
}

/**
 * The stage of a sample: its stack from the top (the sampled frame) down to the root. Among weak
 * matches a JS frame beats a native one: `runMicrotasks` under `processTicksAndRejections` is Node's
 * tick loop, not an anonymous native.
 */
export function classifyStack(stack: readonly Frame[]): string {
  let weak: string | undefined;
  let native: string | undefined;
  for (const [i, f] of stack.entries()) {
    const m = stageOf(f, stack.slice(i + 1));
    if (!m) continue;
    if (!m.weak) return m.stage;
    if (m.stage === NATIVE) native ??= m.stage;
    else weak ??= m.stage;
  }
  return weak ?? native ?? FALLBACK;
}

/** Frames of node's module loader: a sample under one is start-up work, even after the first request. */
export function isStartupFrame(f: Frame): boolean {
  return /^node:internal\/(modules|bootstrap)\//.test(f.url) || (!f.url && /^(compileFunction|compileSourceTextModule)$/.test(f.name));
}

/**
 * AsyncAPI endpoints (only when AsyncApiConfig.enabled):
 * - `GET /asyncapi.json`: the configured document; 404 problem when none is configured.
 * - `POST /asyncapi/parse`: ParseRequest → ParseResult (JSON, or YAML: the record or the bare document).
 * - `POST /asyncapi/validate`: ValidateRequest → ValidationResponse.
 * Disabled, none of them is mounted (the router's 404). Errors: 400 malformed JSON or YAML, 415 a body
 * neither JSON nor YAML, 413 over max_body_size, 422 a request or document keel cannot read. See docs/api-descriptions.md.
 */
import type { ServerResponse } from 'node:http';
import { readRawBody } from '../http/body.js';
import { DEFAULT_JSON_POISONING, jsonPoisoningOf, parseJsonText, type JsonPoisoning } from '../http/json-parse.js';
import { ConfigError, HttpError } from '../http/errors.js';
import { problemFor, sendProblem } from '../http/problem.js';
import { MAX_JSON_DEPTH, parseMediaType, refuseDeepJson, tooDeep, valueDepthExceeds } from '../http/content.js';
import { AsyncApiConfig, ParseRequest, ValidateRequest } from '../records/protocol.js';
import { DEFAULT_MAX_BODY_SIZE } from '../records/server.js';
import type { KeelRequest } from '../http/request.js';
import { mountAll, type MountSpec, type ProtocolHost, type RawHandler } from '../openapi/host.js';
import { isJsonContentType } from '../jsonrpc/index.js';
import { analyseAsyncApi, parseAsyncApi } from './parse.js';
import { AsyncApiDocumentError, refTokens } from './resolve.js';
import { AsyncApiBudgetError, ExpansionBudget } from './budget.js';
import { PayloadValidator } from './validate.js';
import { runWork, workAdmission, workGateOf, type AppWorkGate, type WorkGateHost } from '../server/cost.js';

export { analyseAsyncApi, parseAsyncApi, type AsyncApiModel, type ModelChannel, type ModelMessage } from './parse.js';
export { AsyncApiDocumentError, follow, lookup, MAX_RESOLVED_NODES } from './resolve.js';
export { AsyncApiBudgetError, deepResolve, ExpansionBudget, MAX_EXPANDED_DEPTH, DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES, type Cost } from './budget.js';
export { PayloadValidator, DEFAULT_VALIDATOR_CACHE_SIZE, type PayloadValidatorOptions } from './validate.js';

/** Where the configured document is served (fixed by the spec). */
export const ASYNCAPI_JSON_PATH = '/asyncapi.json';
/** ParseRequest endpoint. */
export const ASYNCAPI_PARSE_PATH = '/asyncapi/parse';
/** ValidateRequest endpoint. */
export const ASYNCAPI_VALIDATE_PATH = '/asyncapi/validate';

/** AsyncApiConfig as accepted from code. */
export type AsyncApiConfigInput = Partial<AsyncApiConfig>;

export interface AsyncApiHandlersOptions {
  /** AsyncApiConfig (default: disabled). */
  config?: AsyncApiConfigInput | Readonly<AsyncApiConfig> | null;
  /** Body cap when the App did not read the body already. Default `DEFAULT_MAX_BODY_SIZE` (10 MiB). */
  maxBodySize?: number | null;
  /** `__proto__` / `constructor.prototype` keys in posted documents. Default: refused (400); the App passes its ServerConfig's. */
  jsonPoisoning?: JsonPoisoning;
  /** Documents whose compiled validators are cached. Default 32. */
  validatorCacheSize?: number;
  /**
   * The App's gate of expensive work (lib/server/cost.ts): parse and validate are admitted, queued and charged
   * to the client's CPU budget. Default none (an App passes its own unless `work_limits` is null).
   */
  gate?: AppWorkGate;
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

function unprocessable(res: ServerResponse, detail: string, loc: Array<string | number>): void {
  sendProblem(res, problemFor('KEEL_VALIDATION_FAILED', detail, { errors: [{ type: 'value_error', loc, msg: detail }] }));
}

/**
 * YAML media types (RFC 9512 `application/yaml`, the older `text/yaml` / `application/x-yaml`, and
 * AsyncAPI's own `+yaml` types): AsyncAPI documents are most often written in YAML.
 */
function isYamlContentType(header: string | undefined): boolean {
  const type = parseMediaType(header)?.type ?? '';
  return type === 'application/yaml' || type === 'text/yaml' || type === 'application/x-yaml' || type.endsWith('+yaml');
}

/** Aliases a YAML body may use: enough for real documents, far too few for an alias bomb ("billion laughs"). */
export const ASYNCAPI_YAML_MAX_ALIASES = 100;

interface YamlDocument {
  errors: Error[];
  warnings: Error[];
  toJS(options: Record<string, unknown>): unknown;
}
type YamlParseDocument = (text: string, options: Record<string, unknown>) => YamlDocument;
let yamlParse: Promise<YamlParseDocument | undefined> | undefined;
/** The optional `yaml` package, loaded on the first YAML body (undefined when it is not installed). */
function loadYaml(): Promise<YamlParseDocument | undefined> {
  yamlParse ??= import('yaml').then(
    (m) => m.parseDocument as unknown as YamlParseDocument,
    () => undefined,
  );
  return yamlParse;
}

/**
 * Whether a YAML text opens more than `limit` flow collections (`[`, `{`) without closing them. The
 * yaml package runs out of memory on 100,000 nested flow sequences (a fatal V8 error, not an
 * exception), so this runs on the bytes first. Every bracket counts, quoted or in a comment: a
 * client cannot hide an opening one, and a real document never has `limit` unclosed ones.
 * Block nesting needs indentation, so a body of max_body_size holds only about 1,400 levels: the
 * parsed value's depth is checked instead.
 */
export function yamlFlowDepthExceeds(raw: Buffer, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return false;
}

/**
 * A client's YAML text as data. `parseDocument` rather than `parse`: `parse` hands the document's
 * warnings (an unknown tag such as `!!js/function`) to `process.emitWarning`, which would let any
 * client write to the server's stderr; here a warning refuses the body like an error does.
 */
function yamlValue(parseDocument: YamlParseDocument, text: string): unknown {
  // The core schema (YAML 1.2 JSON-compatible types), no `<<` merge keys, no custom tags: data only.
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS({ maxAliasCount: ASYNCAPI_YAML_MAX_ALIASES });
}

/**
 * Read and parse the body as JSON, or as YAML under a YAML media type; on failure the problem is sent
 * and undefined returned. A YAML body may be the request record or, for `/asyncapi/parse`, the bare
 * document (`asyncapi: 3.0.0 …`), which reads as `{ spec: document }`.
 */
async function readBody(req: KeelRequest, res: ServerResponse, limit: number | null, bareDocument: boolean, poisoning: JsonPoisoning): Promise<{ value: unknown } | undefined> {
  const yaml = isYamlContentType(req.headers['content-type']);
  if (!yaml && !isJsonContentType(req.headers['content-type'])) {
    sendProblem(res, new HttpError(415, 'Send the request as application/json or application/yaml', { headers: { 'Accept-Post': 'application/json, application/yaml' } }));
    return undefined;
  }
  let raw: Buffer;
  try {
    raw = req.rawBody ?? (await readRawBody(req, limit));
  } catch (err) {
    sendProblem(res, err);
    return undefined;
  }
  if (!yaml) {
    try {
      // Same nesting rule and 400 problem as a JSON body, before parsing (resolve/validate recurse).
      refuseDeepJson(raw);
      return { value: parseJsonText(raw.toString('utf8'), poisoning) };
    } catch (err) {
      if (err instanceof HttpError) {
        sendProblem(res, err);
        return undefined;
      }
      sendProblem(res, problemFor('KEEL_MALFORMED_JSON', `The body is not valid JSON: ${(err as Error).message}`));
      return undefined;
    }
  }
  const parseDocument = await loadYaml();
  if (!parseDocument) {
    sendProblem(res, new HttpError(415, 'YAML bodies need the yaml package on the server (npm install yaml); send application/json instead', { headers: { 'Accept-Post': 'application/json' } }));
    return undefined;
  }
  // The JSON nesting rule holds for YAML documents too (same 400 problem).
  if (yamlFlowDepthExceeds(raw, MAX_JSON_DEPTH)) {
    sendProblem(res, tooDeep());
    return undefined;
  }
  let value: unknown;
  try {
    value = yamlValue(parseDocument, raw.toString('utf8'));
  } catch (err) {
    sendProblem(res, new HttpError(400, `The body is not valid YAML: ${(err as Error).message.split('\n')[0]}`, { code: 'KEEL_BAD_REQUEST' }));
    return undefined;
  }
  if (valueDepthExceeds(value, MAX_JSON_DEPTH)) {
    sendProblem(res, tooDeep());
    return undefined;
  }
  // YAML bodies obey the same prototype-key rule as JSON ones (on_proto_poisoning, on_constructor_poisoning).
  const text = raw.toString('latin1');
  if (text.includes('proto') || text.includes('constructor')) {
    try {
      value = parseJsonText(JSON.stringify(value) ?? 'null', poisoning);
    } catch (err) {
      sendProblem(res, err);
      return undefined;
    }
  }
  if (bareDocument && typeof value === 'object' && value !== null && !Array.isArray(value) && 'asyncapi' in value && !('spec' in value)) value = { spec: value };
  return { value };
}

/** Map what can go wrong with a client's request or document to a 422; anything else is a 500. */
function reportFailure(res: ServerResponse, err: unknown): void {
  if (err instanceof ConfigError) {
    unprocessable(res, err.message, ['body', err.key]);
  } else if (err instanceof AsyncApiBudgetError) {
    // Refused before the answer was built (lib/asyncapi/budget.ts): its own problem type, with the limit.
    sendProblem(res, problemFor('KEEL_WORK_BUDGET_EXCEEDED', `The AsyncAPI document cannot be processed within this request's budget: ${err.message}`, { setting: err.setting, limit: err.limit }));
  } else if (err instanceof AsyncApiDocumentError) {
    let tokens: string[] = [];
    try {
      tokens = err.pointer ? refTokens(err.pointer, '') : [];
    } catch {
      tokens = [];
    }
    unprocessable(res, `The AsyncAPI document cannot be read: ${err.message}`, ['body', 'spec', ...tokens]);
  } else {
    sendProblem(res, err);
  }
}

/**
 * The AsyncAPI endpoints for a config: [] when disabled. A configured `spec` is read once here,
 * so a document keel cannot read fails at start-up with a ConfigError.
 *
 * @example
 * const mounts = asyncApiMounts({ config: { enabled: true, spec: myAsyncApiDocument } });
 * // each: { method, path, handler, readBody } for app.mount(...)
 */
export function asyncApiMounts(options: AsyncApiHandlersOptions = {}): MountSpec[] {
  if (options.config === null || options.config === undefined) return [];
  const config = AsyncApiConfig.parse(options.config, 'AsyncApiConfig');
  if (!config.enabled) return [];
  const limit = options.maxBodySize === undefined ? DEFAULT_MAX_BODY_SIZE : options.maxBodySize;
  const poisoning = options.jsonPoisoning ?? DEFAULT_JSON_POISONING;
  let served: string | undefined;
  if (config.spec !== null && config.spec !== undefined) {
    try {
      // The server's own document: not held to the budget of client requests. Measuring the bindings
      // follows their $refs, so a dangling one fails here rather than on the first /asyncapi/parse.
      const own = ExpansionBudget.unlimited();
      for (const c of analyseAsyncApi(config.spec, own).channels) if (c.bindings) own.measure(config.spec, c.bindings.value, c.bindings.pointer);
    } catch (err) {
      throw new ConfigError(`Invalid AsyncApiConfig at AsyncApiConfig.spec: ${(err as Error).message}`, { record: 'AsyncApiConfig', path: 'AsyncApiConfig.spec', key: 'spec', value: config.spec });
    }
    served = JSON.stringify(config.spec);
  }
  const validator = new PayloadValidator({ cacheSize: options.validatorCacheSize });
  // One budget per request, shared by every $ref expansion of that request (issue 26 item 2).
  const budget = (): ExpansionBudget => new ExpansionBudget(config.max_expanded_nodes, config.max_response_bytes);
  // Issue 35 item 2: the work is paid for by its measured time (lib/server/cost.ts), refused before the body is read.
  const gate = options.gate;
  const admission = gate ? [workAdmission(gate)] : undefined;

  const document: RawHandler = function keelAsyncApiDocument(_req, res) {
    // No document configured: 404, the same answer as for any resource that does not exist.
    if (served === undefined) sendProblem(res, problemFor('KEEL_NOT_FOUND', 'No AsyncAPI document is configured (AsyncApiConfig.spec is null)'));
    else sendJson(res, 200, served);
  };

  const parse: RawHandler = async function keelAsyncApiParse(req, res) {
    const body = await readBody(req, res, limit, true, poisoning);
    if (!body) return;
    try {
      const { spec } = ParseRequest.parse(body.value, 'ParseRequest');
      const answer = await runWork(gate, req, res, () => JSON.stringify(parseAsyncApi(spec, budget())));
      if (answer !== undefined) sendJson(res, 200, answer);
    } catch (err) {
      reportFailure(res, err);
    }
  };

  const validate: RawHandler = async function keelAsyncApiValidate(req, res) {
    const body = await readBody(req, res, limit, false, poisoning);
    if (!body) return;
    try {
      // `payload: null` is a payload like any other, but the record reads null as "missing": swap it in after.
      const input = body.value as Record<string, unknown> | null;
      const nullPayload = typeof input === 'object' && input !== null && input.payload === null;
      const r = ValidateRequest.parse(nullPayload ? { ...input, payload: 0 } : input, 'ValidateRequest');
      const answer = await runWork(gate, req, res, () => JSON.stringify(validator.validate(r.spec, r.channel, r.message, nullPayload ? null : r.payload, budget())));
      if (answer !== undefined) sendJson(res, 200, answer);
    } catch (err) {
      reportFailure(res, err);
    }
  };

  return [
    { method: 'GET', path: ASYNCAPI_JSON_PATH, handler: document, readBody: false, page: 'AsyncAPI document' },
    { method: 'POST', path: ASYNCAPI_PARSE_PATH, handler: parse, readBody: true, middleware: admission },
    { method: 'POST', path: ASYNCAPI_VALIDATE_PATH, handler: validate, readBody: true, middleware: admission },
  ];
}

/** Installer for lib/app/builtins.ts: mounts nothing when `asyncapi` is null or disabled. */
export function installAsyncApi(host: ProtocolHost & WorkGateHost): void {
  const enabled = host.config.asyncapi?.enabled === true;
  mountAll(host, asyncApiMounts({ config: host.config.asyncapi, maxBodySize: host.config.max_body_size, jsonPoisoning: jsonPoisoningOf(host.config), gate: enabled ? workGateOf(host) : undefined }));
}

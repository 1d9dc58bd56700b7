/**
 * The conformance case format (see the corpus README): a route definition, a request and the
 * response a conforming server must give. Fields are typed as loosely as the corpus is written;
 * the loader only insists on what the runner needs.
 */

export interface HandlerParameterSpec {
  type?: string;
  required?: boolean;
  optional?: boolean;
  separator?: string;
  [schemaKeyword: string]: unknown;
}

export interface CaseHandler {
  route: string;
  method: string;
  parameters?: Partial<Record<'path' | 'query' | 'headers' | 'cookies' | 'files', Record<string, HandlerParameterSpec>>>;
  body_schema?: Record<string, unknown>;
  content_type?: string;
  middleware?: Record<string, unknown>;
  cors?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CaseFile {
  field_name: string;
  filename?: string | null;
  content?: string;
  /** `text` (default) or `base64`. */
  content_encoding?: string;
  content_type?: string | null;
  /** Hex bytes, used instead of `content` by a few cases. */
  magic_bytes?: string;
  headers?: Record<string, string>;
}

export interface CaseRequest {
  method: string;
  path: string;
  query_params?: Record<string, unknown>;
  query_string?: string;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  body?: unknown;
  form_data?: Record<string, unknown>;
  data?: Record<string, unknown>;
  files?: CaseFile[];
  content_type?: string;
  [key: string]: unknown;
}

export interface CaseExpectedResponse {
  status_code: number;
  body?: unknown;
  headers?: Record<string, string>;
  cookies?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What every case has: where it came from, and why the runner does not send it (if so). */
export interface CaseIdentity {
  /** Stable id: `<category>/<file stem>` or `<category>/<id>` (array files). */
  id: string;
  category: string;
  name: string;
  description?: string;
  /**
   * What the case asks of an implementation, on whose word (suite/standing.ts): `required` (the
   * specification or an RFC), `reference` (the reference implementation's answer), `keel` (keel's
   * choice). Set on the shipped suite's cases; corpus files may carry it too.
   */
  requirement?: 'required' | 'reference' | 'keel';
  /** The citation, the reference's behaviour, or keel's one-line why, for `requirement`. */
  basis?: string;
  /** File the case came from (plus `#<index>` for array files). */
  source: string;
  /** Why the runner does not send or play this case (other protocol, `skip` for node); undefined = runnable. */
  skip?: string;
  /**
   * `skip` is the corpus's skip for Node implementations (`skip.languages`): it applies to keel's own
   * fixture app only, and is lifted for other implementations (loader.ts `forAnyImplementation`).
   */
  implementationSkip?: boolean;
}

export interface ConformanceCase extends CaseIdentity {
  handler: CaseHandler;
  request: CaseRequest;
  expected: CaseExpectedResponse;
  /** Extra blocks a few cases carry (`streaming`, `background`). */
  extra: Record<string, unknown>;
}

/** A frame of a WebSocket session case: sent by the client or expected from the server, in order. */
export interface WebSocketCaseMessage {
  direction: 'send' | 'receive';
  /** A JSON value, as a text frame (sent as JSON text; a received text frame is parsed and compared). */
  payload?: unknown;
  /** A text frame's exact text (sent as is; compared exactly). */
  raw_text?: string;
  /** Default `text`. */
  frame_type?: 'text' | 'binary' | 'ping' | 'pong';
  /** The bytes of a binary, ping or pong frame. */
  payload_base64?: string;
  [key: string]: unknown;
}

/** The handler a WebSocket session case talks to (keel's fixture app serves it with `jsonWebSocket`). */
export interface WebSocketCaseHandler {
  route: string;
  /** The handler's own logic: `echo`, `binary_echo`, `subscribe_ack`, `no_response`, `track_lifecycle`. */
  behavior?: string;
  message_schema?: Record<string, unknown> | null;
  response_schema?: Record<string, unknown> | null;
  on_disconnect_action?: string;
  /** A GraphQL route instead of a JSON message handler: one of the specification's built-in schemas (`full` has subscriptions). */
  graphql?: { schema_type: string };
  [key: string]: unknown;
}

export interface WebSocketCaseSession {
  messages: WebSocketCaseMessage[];
  /** The code the client closes with (1000 when absent). */
  close_code?: number;
  /** End with a dropped connection (no close frame) instead of the closing handshake. */
  abnormal_close?: boolean;
  /** Data frames (text and binary) the client must have received by the end, after a quiet period. */
  expected_receive_count?: number;
  /** The subprotocol the client asks for in the handshake (`graphql-transport-ws`); the server must select it. */
  subprotocol?: string;
}

/** A WebSocket session case (`{id, category, websocket: {handler, session}, expected?}`). */
export interface WebSocketCase extends CaseIdentity {
  kind: 'websocket';
  websocket: { handler: WebSocketCaseHandler; session: WebSocketCaseSession };
  /** Server-side state after the session (e.g. `disconnect_count`): checked only where the target can report it. */
  expected: Record<string, unknown>;
}

/** The protocols a ProtocolCase speaks (harness/conformance/kinds/). */
export type ProtocolKind = 'graphql' | 'grpc' | 'jsonrpc' | 'api-description';

/**
 * A case of another protocol than an HTTP exchange (GraphQL over HTTP, gRPC over HTTP/2, JSON-RPC,
 * an API description document): its kind's module (kinds/<kind>.ts) loads `spec` from the corpus
 * document, plays it as a client, and serves it in keel's fixture app.
 */
export interface ProtocolCase extends CaseIdentity {
  kind: ProtocolKind;
  /** The kind's normalised view of the case (what the manifest carries under `protocol`). */
  spec: Record<string, unknown>;
}

/** A case the runner does not send, with the reason (other protocols, whole documents, `skip`). */
export interface SkippedCase {
  id: string;
  category: string;
  source: string;
  skip: string;
  description?: string;
  requirement?: CaseIdentity['requirement'];
  basis?: string;
}

export type LoadedCase = ConformanceCase | WebSocketCase | ProtocolCase | SkippedCase;
/** A case the runner plays against a target: an HTTP exchange, a WebSocket session or another protocol's case. */
export type RunnableCase = ConformanceCase | WebSocketCase | ProtocolCase;

/** A runnable HTTP request/response case (what the manifest, `--exec` and the HTTP fixture routes take). */
export function isRunnable(c: LoadedCase): c is ConformanceCase & { skip: undefined } {
  return (c as ConformanceCase).handler !== undefined && !isWebSocketCase(c) && c.skip === undefined;
}

/** A case of another protocol (kinds/), runnable or not. */
export function isProtocolCase(c: LoadedCase): c is ProtocolCase {
  const kind = (c as ProtocolCase).kind;
  return kind !== undefined && kind !== ('websocket' as string) && (c as ProtocolCase).spec !== undefined;
}

/** A case of another protocol the runner plays. */
export function isRunnableProtocol(c: LoadedCase): c is ProtocolCase & { skip: undefined } {
  return isProtocolCase(c) && c.skip === undefined;
}

/** A WebSocket session case, runnable or not. */
export function isWebSocketCase(c: LoadedCase): c is WebSocketCase {
  return (c as WebSocketCase).kind === 'websocket';
}

/** A WebSocket session case the runner plays. */
export function isRunnableWebSocket(c: LoadedCase): c is WebSocketCase & { skip: undefined } {
  return isWebSocketCase(c) && c.skip === undefined;
}

/**
 * A known contradiction of the corpus (contradictions.ts): declared here, beside the case types, so the
 * rules, the verdicts and the list can share it without importing one another.
 */
export interface Contradiction {
  /** The case id (canonical: `testing_data/<category>/<stem>` or `fixtures/<category>/<id>`). */
  case: string;
  /** The case whose expectation this one contradicts. */
  conflicts_with: string;
  /** The contradicted field, as a path into the case document. */
  field: string;
  /**
   * The field in the conflicting case when it lies elsewhere than `field` (an error item at another
   * index); default `field`.
   */
  other_field?: string;
  /** What differs, in words. */
  reason: string;
  /**
   * The rule that found it (contradiction-rules.ts); absent for an entry of contradictions.json.
   * At `--level lenient` a `validation-style` answer passes: the level accepts either style.
   */
  rule?: 'same-request' | 'validation-style' | 'validation-input';
}

/**
 * The argument types of the App methods that protocols serve (`app.ws()`, `app.registerGraphqlRoute()`),
 * written without the protocols' packages (ws, graphql): the App's declarations type-check in a project
 * that has only keel (`skipLibCheck: false`). keel/ws and keel/graphql accept the same shapes.
 */
import type { KeelRequest } from '../http/request.js';
import type { UpgradeGuard } from '../ws/guard.js';

/** A WebSocket message (RFC 6455 §5.6 data frames, §5.5 control frames). */
export type WebSocketMessage =
  | { type: 'text'; data: string }
  | { type: 'binary'; data: Buffer }
  | { type: 'close'; code: number; reason: string }
  | { type: 'ping'; data: Buffer }
  | { type: 'pong'; data: Buffer };

/** What a WebSocket route's handler gets: keel/ws's `WebSocketSession`. */
export interface WebSocketSessionApi extends AsyncIterable<WebSocketMessage> {
  /** The upgrade request (request id, auth, headers). */
  readonly request: KeelRequest;
  /** Path parameters of the route. */
  readonly params: Readonly<Record<string, string>>;
  /** Settles when the connection closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The negotiated subprotocol, '' when none. */
  readonly protocol: string;
  readonly isOpen: boolean;
  send(message: WebSocketMessage | string | Buffer): Promise<void>;
  /**
   * Forward each event published on `topic` (`app.publish(topic, payload)`, on every instance with a
   * shared pub/sub) to this client as text (JSON unless a string). Ends on close or when the returned function is called.
   */
  subscribe(topic: string): () => void;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

/**
 * The handler of `app.ws()`. Written as a method so a function taking keel/ws's `WebSocketSession`
 * class is accepted too (method parameters are compared bivariantly).
 */
export type AppWebSocketHandler = { handle(session: WebSocketSessionApi): void | Promise<void> }['handle'];

/** Options of `app.ws()` (keel/ws `AppWebSocketOptions`). */
export interface AppWebSocketOptions {
  /** Largest message in bytes; larger ones close the connection with 1009. Default 1 MiB. */
  maxPayload?: number;
  /** Checks run before the handshake (auth, origin, request id), after the server-level ones. Default none. */
  guards?: readonly UpgradeGuard[];
  /** Subprotocols this route speaks (Sec-WebSocket-Protocol, RFC 6455 §1.9). Default none. */
  protocols?: readonly string[];
  /** A CorsConfig (snake_case or camelCase): browser upgrades from other origins get 403. Default: any origin. */
  cors?: unknown;
  /** Per-socket message rate and send-buffer bound (keel/ws `WebSocketFairnessOptions`). Default: the App's `ws_*` settings. */
  fairness?: AppWebSocketFairness;
}

/** keel/ws `WebSocketFairnessOptions`: each key defaults to the App's `ws_*` setting (docs/workers-and-limits.md). */
export interface AppWebSocketFairness {
  messagesPerSecond?: number | null;
  messageBurst?: number;
  onRateExceeded?: 'close' | 'error' | 'drop';
  maxBufferedBytes?: number | null;
  onSendBufferFull?: 'close' | 'drop';
}

/** Route options of `app.registerGraphqlRoute()` (keel/graphql `GraphqlRouteOptions`). */
export interface AppGraphqlRouteOptions {
  /** Serve the GraphiQL page on GET with `Accept: text/html`. Default false (spec). */
  enablePlayground?: boolean;
  /** Body cap, bytes; null = unlimited. Default: the App's max_body_size. */
  maxBodySize?: number | null;
  /** A CorsConfig: subscription upgrades from browser origins it does not allow get 403. Default: any origin. */
  cors?: unknown;
  /** Most lexical tokens in one query (HTTP and WebSocket). Default DEFAULT_MAX_TOKENS (5000), docs/graphql.md. */
  maxTokens?: number;
  /** Operations open at once per WebSocket connection. Default 100. */
  maxSubscriptionsPerConnection?: number;
  /** WebSocket connections open at once on the route; more are refused with 503. Default 1000. */
  maxConnections?: number;
  /** Per-socket message rate and send-buffer bound of the WebSocket side. Default: the App's `ws_*` settings. */
  fairness?: AppWebSocketFairness;
  /** A keel/graphql `PubSub` for the built-in schema's events. Default: a MemoryPubSub per route. */
  pubsub?: unknown;
  /** SDL routes: Subscription fields stream what is published on `graphql:<path>:<field>` (`app.publish()`), on every instance with a shared pub/sub. Default false. */
  subscriptionEvents?: boolean;
  /** Further keel/graphql route options. */
  [option: string]: unknown;
}

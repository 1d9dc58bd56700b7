/**
 * WebSocket routes (spec, Events: WebSocketMessage): typed messages, upgrade guards, noServer routing.
 */
export { WebSocketSession, HIGH_WATER_MARK, type WebSocketMessage } from './session.js';
export {
  createWebSocketUpgradeHandler, guardedUpgrade, WebSocketRouter, DEFAULT_MAX_PAYLOAD, DEFAULT_MAX_CONNECTIONS, CLOSE_INTERNAL_ERROR, CLOSE_GOING_AWAY,
  type UpgradeHandler, type WebSocketHandler, type WebSocketRouteOptions,
} from './upgrade.js';
export { middlewareGuard, originGuard, runGuards, rejectUpgrade, handshakeProblem, UpgradeRejection, type UpgradeGuard, type UpgradeHeaders } from './guard.js';
export {
  applyFairness, fairnessOptions, rateLimitReply, CLOSE_POLICY_VIOLATION, CLOSE_TRY_AGAIN_LATER, CLOSE_IDLE, FAIRNESS_CLOSE_GRACE_MS, DEFAULT_WS_IDLE_TIMEOUT,
  DEFAULT_WS_MESSAGES_PER_SECOND, DEFAULT_WS_MESSAGE_BURST, DEFAULT_WS_ON_RATE_EXCEEDED, DEFAULT_WS_MAX_BUFFERED_BYTES, DEFAULT_WS_ON_SEND_BUFFER_FULL,
  type WebSocketFairnessOptions, type WebSocketFairness, type WsRateAction, type WsSendBufferAction,
} from './fairness.js';
export { DeliverySlicer, deliveries, slicedEvents, slicedPubSub, DEFAULT_DELIVERY_SLICE } from './fanout.js';
export { installWebSocketRoute, lazyMiddlewareGuard, type AppWebSocketOptions, type WebSocketHost } from './install.js';
export {
  jsonWebSocket, parseJsonMessage, INVALID_JSON_REPLY, MESSAGE_VALIDATION_FAILED_REPLY, FORBIDDEN_KEY_REPLY, BINARY_NOT_SUPPORTED_REPLY, DEFAULT_JSON_WEBSOCKET_LOG_LEVEL,
  type JsonWebSocketOptions, type JsonWebSocketClose, type JsonMessageHandler, type JsonBinaryHandler, type JsonConnectHandler, type JsonDisconnectHandler, type JsonWebSocketLogger,
} from './json.js';

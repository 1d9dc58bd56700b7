/**
 * keel/harness: response snapshots, GraphQL subscription snapshots and the conformance runner.
 * Usable against keel and against any other implementation of the specification.
 */
export * from './snapshot.js';
export * from './golden.js';
export * from './graphql-subscription.js';
export type * from './conformance/types.js';
export { isRunnable, isWebSocketCase, isRunnableWebSocket } from './conformance/types.js';
export { playSession, compareFrame, DEFAULT_QUIET_MS, type FrameType, type FrameLog, type SessionOutcome, type SessionOptions } from './conformance/ws-session.js';
export { loadCases, loadFile, toCase, RUNNER_LANGUAGE } from './conformance/loader.js';
export { buildRequest, buildMultipart, send, withQuery, jsonText, DEFAULT_REQUEST_TIMEOUT_MS, NoResponseError, type WireRequest } from './conformance/client.js';
export { compareResponse, compareHeaders, compareBody, compareCookies, diffJson, isPattern, parseSetCookies, CONFORMANCE_LEVELS, OPTIONAL_ERROR_ITEM_KEYS, type ConformanceLevel, type Mismatch } from './conformance/compare.js';
export { CONTRADICTIONS, contradictionFor, contradictionIndex, type Contradiction, type ContradictionIndex } from './conformance/contradictions.js';
export { contradictionsByRule } from './conformance/contradiction-rules.js';
export { situationOf } from './conformance/error-situation.js';
export { buildManifest, manifestCase, normaliseParameters, colonRoute, routeTable, MANIFEST_VERSION, WEBSOCKET_NOT_IN_MANIFEST, type Manifest, type ManifestCase, type ManifestParameter, type ManifestRequest, type ManifestRoute } from './conformance/manifest.js';
export { handlerAnswer, isFrameworkOwnedError, isHandlerOwnedError, FRAMEWORK_STATUSES, HANDLER_REACHED, type HandlerAnswer } from './conformance/handler-answer.js';
export { loadSuite, suiteDocuments, SUITE_PREFIX } from './conformance/suite/index.js';
export { execTarget, planGroups, EXEC_GROUPINGS, DEFAULT_EXEC_START_TIMEOUT_MS, ServerDiedError, ServerNotAnsweringError, type ExecGrouping, type ExecOptions } from './conformance/exec.js';
export { runCases, summarise, applyContradictions, wireFor, CASE_HEADER, type ActualResponse, type CaseResult, type CaseStatus, type CaseTarget, type CategorySummary, type RunOptions, type RunReport, type SentRequest } from './conformance/runner.js';
export { formatTable, formatFailures, formatContradicted, formatRequest, formatTranscript, summaryLine, toJson, toJUnit, escapeXml } from './conformance/report.js';
export { main as conformanceCli, formatList, USAGE as CONFORMANCE_USAGE, type CliIo } from './conformance/cli-main.js';

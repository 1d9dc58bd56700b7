/**
 * keel/harness: response snapshots, GraphQL subscription snapshots and the conformance runner.
 * Usable against keel and against any other implementation of the specification.
 */
export * from './snapshot.js';
export * from './golden.js';
export * from './graphql-subscription.js';
export type * from './conformance/types.js';
export { isRunnable } from './conformance/types.js';
export { loadCases, loadFile, toCase, RUNNER_LANGUAGE } from './conformance/loader.js';
export { buildRequest, buildMultipart, send, DEFAULT_REQUEST_TIMEOUT_MS, type WireRequest } from './conformance/client.js';
export { compareResponse, compareHeaders, compareBody, compareCookies, diffJson, isPattern, parseSetCookies, type Mismatch } from './conformance/compare.js';
export { runCases, summarise, type CaseResult, type CaseStatus, type CaseTarget, type CategorySummary, type RunOptions, type RunReport } from './conformance/runner.js';
export { formatTable, formatFailures, summaryLine, toJson, toJUnit, escapeXml } from './conformance/report.js';
export { main as conformanceCli, USAGE as CONFORMANCE_USAGE, type CliIo } from './conformance/cli-main.js';

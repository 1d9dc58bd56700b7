/**
 * What spans must not carry (issue 47): the values of query parameters (a `?token=…` reaches every trace
 * backend), and spans for probes at all. Imports nothing, so the entry point can export it for the
 * user's instrumentation-http set-up without loading tracing.
 */

/** The marker written in place of a redacted query value. */
export const REDACTED = 'REDACTED';

/**
 * A query string with the values of `params` (names, case-insensitive; `'*'` = all) replaced by REDACTED.
 *
 * @example
 * queryRedactor(['token'])('token=secret123&page=2'); // 'token=REDACTED&page=2'
 */
export function queryRedactor(params: readonly string[]): (query: string) => string {
  const all = params.includes('*');
  const names = new Set(params.map((p) => p.toLowerCase()));
  return (query) => query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: judged as written
    }
    return all || names.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
  }).join('&');
}

/**
 * For instrumentation-http's `ignoreIncomingRequestHook`: true for probe requests (`paths`, by default
 * `/health`, `/ready` and `/metrics`), which then get no SERVER span, as keel gives them none itself.
 *
 * @example
 * new HttpInstrumentation({ ignoreIncomingRequestHook: untracedRequestHook() });
 */
export function untracedRequestHook(paths: readonly string[] = ['/health', '/ready', '/metrics']): (req: { url?: string }) => boolean {
  const set = new Set(paths);
  return (req) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    return set.has(q < 0 ? url : url.slice(0, q));
  };
}


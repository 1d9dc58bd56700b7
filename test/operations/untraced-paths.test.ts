/**
 * Issue 47, item 4: probes are not traced by default. keel starts no SERVER span for `/health`
 * (OpenTelemetryConfig `untraced_paths`), nor for the readiness and metrics paths; other requests keep theirs.
 * With instrumentation-http, `untracedRequestHook()` is the same rule for its spans.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, untracedRequestHook, queryRedactor, type App, type ServerHandle } from '../../lib/index.js';
import { memorySdk } from '../helpers/otel-sdk.js';

describe('when tracing is on with an SDK and a probe asks /health, /ready or /metrics', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;
  let app: App;
  let server: ServerHandle;
  before(async () => {
    sdk.register();
    app = createApp({ port: 0, host: '127.0.0.1', opentelemetry: {}, readiness: {}, metrics: { default_metrics: false } }, (a) => {
      a.get('/health', () => ({ status: 'ok' }));
      a.get('/users/{id}', (d) => ({ id: d.pathParams.id }));
    });
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    await server?.close();
    await sdk.unregister();
  });

  it('should start no span for them, and one for a route', async () => {
    for (const p of ['/health', '/ready', '/metrics', '/health?probe=1']) assert.equal((await fetch(`${server.url}${p}`)).status, 200, p);
    assert.equal((await fetch(`${server.url}/users/1`)).status, 200);
    await new Promise((r) => setTimeout(r, 50));
    const names = exporter.getFinishedSpans().map((s) => s.name);
    assert.ok(names.includes('GET /users/{id}'), names.join(', '));
    assert.deepEqual(names.filter((n) => /health|ready|metrics/.test(n) || n === 'GET'), [], names.join(', '));
  });

  it('should give instrumentation-http the same rule (untracedRequestHook), and redact every query value by default', () => {
    const hook = untracedRequestHook();
    assert.deepEqual(['/health', '/ready?x=1', '/metrics', '/users/1'].map((url) => hook({ url })), [true, true, true, false]);
    assert.equal(queryRedactor(['*'])('token=secret123&page=2&flag'), 'token=REDACTED&page=REDACTED&flag');
    assert.equal(queryRedactor(['Token', 'api_key'])('token=a&API_KEY=b&page=2&to%6Ben=c'), 'token=REDACTED&API_KEY=REDACTED&page=2&to%6Ben=REDACTED');
  });
});

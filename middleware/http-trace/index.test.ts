import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { httpTrace, HTTP_TRACE_MESSAGE, newSpanId, newTraceId, parseTraceparent, type HttpTraceOptions } from './index.js';
import { TRACE_ENTROPY_POOL_BYTES } from './traceparent.js';
import { ConfigError } from '../../lib/http/errors.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { captureLogs } from '../../test/helpers/log-capture.js';

const capture = () => captureLogs();

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: HttpTraceOptions) {
  const app = express();
  app.use((req, _res, next) => {
    if (req.headers['x-test-request-id']) (req as KeelRequest).requestId = String(req.headers['x-test-request-id']);
    next();
  });
  app.use(httpTrace(options));
  const api = express.Router();
  api.get('/users/:id', (req, res) => res.json((req as KeelRequest).traceContext));
  app.use('/api', api);
  app.get('/fail', (_req, res) => res.status(500).end());
  return app;
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

describe('httpTrace: when the request carries no traceparent', () => {
  it('should start a trace, expose it on req and the response, and log one record', async () => {
    const log = capture();
    const res = await request(appWith({ logger: log.logger })).get('/api/users/7?token=secret').set('X-Test-Request-Id', 'req-1');
    const rec = await log.next();
    const m = TRACEPARENT.exec(res.headers.traceparent ?? '');
    assert.ok(m, `traceparent ${res.headers.traceparent}`);
    assert.equal(m[3], '01');
    assert.deepEqual(res.body, { traceId: m[1], spanId: m[2], flags: '01' });
    assert.equal(rec.msg, HTTP_TRACE_MESSAGE);
    assert.equal(rec.level, 30);
    assert.equal(rec.method, 'GET');
    assert.equal(rec.route, '/api/users/:id');
    assert.equal(rec.path, '/api/users/7');
    assert.equal(rec.status, 200);
    assert.equal(typeof rec.duration_ms, 'number');
    assert.ok((rec.duration_ms as number) >= 0);
    assert.equal(rec.request_id, 'req-1');
    assert.equal(rec.trace_id, m[1]);
    assert.equal(rec.span_id, m[2]);
    assert.equal(rec.parent_span_id, null);
    assert.equal(rec.aborted, false);
    assert.doesNotMatch(JSON.stringify(rec), /secret/);
  });

  it('should give each request its own trace', async () => {
    const app = appWith({ logger: capture().logger });
    const a = await request(app).get('/api/users/1');
    const b = await request(app).get('/api/users/1');
    assert.notEqual(a.body.traceId, b.body.traceId);
  });
});

describe('httpTrace: when the request carries a valid traceparent', () => {
  for (const flags of ['00', '01']) {
    it(`should continue the trace with a new span and keep flags ${flags}`, async () => {
      const log = capture();
      const res = await request(appWith({ logger: log.logger })).get('/api/users/1').set('traceparent', `00-${TRACE}-${SPAN}-${flags}`);
      const rec = await log.next();
      assert.equal(res.body.traceId, TRACE);
      assert.equal(res.body.parentSpanId, SPAN);
      assert.notEqual(res.body.spanId, SPAN);
      assert.equal(res.body.flags, flags);
      assert.equal(res.headers.traceparent, `00-${TRACE}-${res.body.spanId}-${flags}`);
      assert.equal(rec.trace_id, TRACE);
      assert.equal(rec.parent_span_id, SPAN);
    });
  }

  it('should accept a future version with extra fields and answer in version 00', async () => {
    const res = await request(appWith({ logger: capture().logger })).get('/api/users/1').set('traceparent', `cc-${TRACE}-${SPAN}-01-what-the-future-holds`);
    assert.equal(res.body.traceId, TRACE);
    assert.match(res.headers.traceparent ?? '', /^00-/);
  });
});

describe('httpTrace: when the traceparent is invalid', () => {
  for (const [name, value] of [
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with a trailing field', `00-${TRACE}-${SPAN}-01-extra`],
    ['a future version followed by a non-dash', `cc-${TRACE}-${SPAN}-01x`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['a non-hex character', `00-${TRACE.slice(0, 31)}g-${SPAN}-01`],
    ['underscores for dashes', `00_${TRACE}_${SPAN}_01`],
    ['a single-character version', `0-${TRACE}-${SPAN}-01`],
    ['two joined headers', `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01`],
    ['garbage', 'hello'],
  ]) {
    it(`should start a new trace for ${name}`, async () => {
      const log = capture();
      const res = await request(appWith({ logger: log.logger })).get('/api/users/1').set('traceparent', value!);
      const rec = await log.next();
      assert.notEqual(res.body.traceId, TRACE);
      assert.equal(res.body.parentSpanId, undefined);
      assert.equal(rec.parent_span_id, null);
      assert.match(res.headers.traceparent ?? '', TRACEPARENT);
    });
  }

  it('should not accept an empty or missing value in the parser', () => {
    assert.equal(parseTraceparent(''), undefined);
    assert.equal(parseTraceparent(undefined), undefined);
    assert.equal(parseTraceparent([`00-${TRACE}-${SPAN}-01`]), undefined);
  });
});

describe('httpTrace: log levels and outcomes', () => {
  it('should log a 5xx at error and a 4xx at warn', async () => {
    const log = capture();
    const app = appWith({ logger: log.logger });
    await request(app).get('/fail');
    const failed = await log.next();
    await request(app).get('/nowhere');
    const missing = await log.next();
    assert.deepEqual([failed.level, failed.status, failed.route], [50, 500, '/fail']);
    assert.deepEqual([missing.level, missing.status, missing.route], [40, 404, null]);
  });

  it('should leave out the records below the logger level and keep the rest', async () => {
    const log = capture();
    log.logger.level = 'warn';
    const app = appWith({ logger: log.logger });
    await request(app).get('/api/users/1');
    await request(app).get('/fail');
    const rec = await log.next();
    assert.deepEqual([rec.level, rec.status], [50, 500]);
  });

  it('should log a request whose client went away as aborted, at warn', async () => {
    const log = capture();
    const app = express();
    let arrived!: () => void;
    const inHandler = new Promise<void>((r) => (arrived = r));
    app.use(httpTrace({ logger: log.logger }));
    app.get('/slow', () => arrived()); // never answers
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const client = httpRequest({ host: '127.0.0.1', port, path: '/slow' });
    client.on('error', () => {});
    client.end();
    await inHandler;
    client.destroy();
    const rec = await log.next();
    server.close();
    assert.equal(rec.aborted, true);
    assert.equal(rec.level, 40);
    assert.equal(rec.route, '/slow');
  });

  it('should not set the response header when responseHeader is false', async () => {
    const res = await request(appWith({ logger: capture().logger, responseHeader: false })).get('/api/users/1');
    assert.equal(res.headers.traceparent, undefined);
    assert.match(res.body.traceId, /^[0-9a-f]{32}$/);
  });
});

describe('httpTrace: when new trace and span ids are drawn', () => {
  it('should give well-formed ids that never repeat, across refills of the entropy pool', () => {
    const n = (3 * TRACE_ENTROPY_POOL_BYTES) / 16;
    const traces = Array.from({ length: n }, newTraceId);
    const spans = Array.from({ length: n }, newSpanId);
    assert.ok(traces.every((id) => /^[0-9a-f]{32}$/.test(id) && id !== '0'.repeat(32)));
    assert.ok(spans.every((id) => /^[0-9a-f]{16}$/.test(id) && id !== '0'.repeat(16)));
    assert.equal(new Set(traces).size, n);
    assert.equal(new Set(spans).size, n);
  });
});

describe('httpTrace: when no logger is given', () => {
  it('should log JSON lines to stdout at info', () => {
    const script = `
      import express from 'express';
      import { httpTrace } from './middleware/http-trace/index.ts';
      const app = express();
      app.use(httpTrace());
      app.get('/x', (_q, s) => s.end('ok'));
      const srv = app.listen(0, '127.0.0.1', async () => {
        await fetch('http://127.0.0.1:' + srv.address().port + '/x');
        srv.close();
      });`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const rec = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.equal(rec.level, 30);
    assert.equal(rec.route, '/x');
    assert.equal(rec.msg, HTTP_TRACE_MESSAGE);
  });
});

describe('httpTrace: when the options are invalid', () => {
  for (const [name, options, key] of [
    ['a logger that is not a pino logger', { logger: console.log }, /logger/],
    ['a logger string', { logger: 'stdout' }, /logger/],
    ['an unknown level', { level: 'verbose' }, /level/],
    ['a string responseHeader', { responseHeader: 'yes' }, /responseHeader/],
  ] as const) {
    it(`should throw a ConfigError for ${name}`, () => {
      assert.throws(() => httpTrace(options as unknown as HttpTraceOptions), (e: unknown) => e instanceof ConfigError && key.test(e.message));
    });
  }
});
});

/**
 * W3C Trace Context `tracestate` (§3.3): passed on with a continued trace, dropped when invalid or
 * when the traceparent is, under Express 4 and 5.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { httpTrace, parseTracestate, TRACESTATE_MAX_MEMBERS } from './index.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { captureLogs } from '../../test/helpers/log-capture.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('parseTracestate: when the header is read', () => {
  it('should keep valid members in order, without empty members and white space', () => {
    assert.equal(parseTracestate('rojo=00f067aa0ba902b7, ,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(parseTracestate(['rojo=1', 'congo=2']), 'rojo=1,congo=2');
    assert.equal(parseTracestate('tenant1@vendor=x, a/b*c_d-e=y z'), 'tenant1@vendor=x,a/b*c_d-e=y z');
  });

  for (const [why, header] of [
    ['an upper-case key', 'Rojo=1'],
    ['a key starting with a digit (not multi-tenant)', '1abc=1'],
    ['a member without "="', 'rojo'],
    ['an empty key', '=1'],
    ['a tab inside a value', 'rojo=a\tb'],
    ['a value with "="', 'rojo=a=b'],
    ['a control character', 'rojo=a\u0001b'],
    ['a repeated key', 'rojo=1,congo=2,rojo=3'],
    ['more than 32 members', Array.from({ length: TRACESTATE_MAX_MEMBERS + 1 }, (_, i) => `k${i}=v`).join(',')],
    ['a huge header', `rojo=${'x'.repeat(10_000)}`],
    ['only commas', ' , ,'],
  ] as const) {
    it(`should drop the whole header with ${why}`, () => assert.equal(parseTracestate(header), undefined));
  }

  it('should accept exactly 32 members', () => {
    const h = Array.from({ length: TRACESTATE_MAX_MEMBERS }, (_, i) => `k${i}=v`).join(',');
    assert.equal(parseTracestate(h), h);
  });
});

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`httpTrace under ${name}: when a trace with tracestate arrives`, () => {
    const app = express();
    app.use(httpTrace({ logger: captureLogs().logger }));
    app.get('/t', (req, res) => {
      res.json((req as KeelRequest).traceContext);
    });

    it('should pass the tracestate on, on req.traceContext and on the response', async () => {
      const res = await request(app).get('/t').set('traceparent', PARENT).set('tracestate', 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
      assert.equal(res.headers.tracestate, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
      assert.equal(res.body.tracestate, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
      assert.equal(res.body.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    });

    it('should drop the tracestate when the traceparent is invalid (a new trace starts)', async () => {
      const res = await request(app).get('/t').set('traceparent', '00-zz').set('tracestate', 'rojo=1');
      assert.equal(res.headers.tracestate, undefined);
      assert.equal(res.body.tracestate, undefined);
    });

    it('should drop an invalid tracestate and keep the trace', async () => {
      const res = await request(app).get('/t').set('traceparent', PARENT).set('tracestate', 'Bad=1');
      assert.equal(res.headers.tracestate, undefined);
      assert.equal(res.body.parentSpanId, '00f067aa0ba902b7');
    });

    it('should send no tracestate when none came', async () => {
      const res = await request(app).get('/t').set('traceparent', PARENT);
      assert.equal(res.headers.tracestate, undefined);
      assert.equal('tracestate' in res.body, false);
    });
  });
}

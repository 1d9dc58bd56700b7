import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { timeout, DEFAULT_REQUEST_TIMEOUT, type TimeoutOptions } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An Express app whose routes answer after a delay; `late` records what happened to late output. */
// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: TimeoutOptions) {
  const late: { error?: unknown; done?: boolean; writeResult?: unknown } = {};
  const app = express();
  app.use(timeout(options));
  app.get('/fast', async (_req, res) => {
    await sleep(50);
    res.json({ status: 'ok' });
  });
  app.get('/slow', async (_req, res) => {
    await sleep(1300);
    try {
      res.status(200);
      res.setHeader('X-Late', 'yes');
      res.json({ status: 'late' });
      late.done = true;
    } catch (err) {
      late.error = err;
    }
  });
  app.get('/slow-stream', async (_req, res) => {
    await sleep(1300);
    try {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      late.writeResult = res.write('part');
      res.end('end', () => {
        late.done = true;
      });
    } catch (err) {
      late.error = err;
    }
  });
  app.get('/streaming', async (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('first;');
    await sleep(1300);
    res.end('second');
  });
  return { app, late };
}

describe('timeout: when the handler answers before the deadline', () => {
  it('should pass the response through untouched', async () => {
    const { app } = appWith({ request_timeout: 1 });
    const res = await request(app).get('/fast');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('should not cut a streaming response that started before the deadline', async () => {
    const { app } = appWith({ request_timeout: 1 });
    const res = await request(app).get('/streaming');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'first;second');
  });
});

describe('timeout: when the handler is too slow', () => {
  it('should answer 408 problem details with Connection: close', async () => {
    const { app } = appWith({ request_timeout: 1 });
    const res = await request(app).get('/slow');
    assert.equal(res.status, 408);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.headers['x-late'], undefined);
    assert.deepEqual(res.body, {
      type: 'https://keel.dev/errors/request-timeout',
      title: 'Request Timeout',
      status: 408,
      detail: 'The server did not answer within 1 second',
      timeout: 1,
    });
  });

  it('should answer from the shorter deadline when two timeouts are stacked', async () => {
    const app = express();
    app.use(timeout({ request_timeout: 1 }), timeout({ request_timeout: 5 }));
    app.get('/slow', async (_req, res) => {
      await sleep(1300);
      res.json({ status: 'late' });
    });
    const res = await request(app).get('/slow');
    assert.equal(res.status, 408);
    assert.equal(res.body.detail, 'The server did not answer within 1 second');
  });

  it('should discard late res.status/setHeader/json without throwing', async () => {
    const { app, late } = appWith({ requestTimeout: 1 });
    const res = await request(app).get('/slow');
    assert.equal(res.status, 408);
    await sleep(500);
    assert.equal(late.error, undefined);
    assert.equal(late.done, true);
  });

  it('should discard late writeHead/write/end and still call the end callback', async () => {
    const { app, late } = appWith({ request_timeout: 1 });
    const res = await request(app).get('/slow-stream');
    assert.equal(res.status, 408);
    await sleep(500);
    assert.equal(late.error, undefined);
    assert.equal(late.writeResult, true);
    assert.equal(late.done, true);
  });

  it('should answer 408 even while the client is still expected to send a body', async () => {
    const app = express();
    app.use(timeout({ request_timeout: 1 }));
    app.post('/upload', () => {
      /* never answers: waits for a body that never completes */
    });
    const res = await request(app).post('/upload').set('Content-Type', 'text/plain').send('partial');
    assert.equal(res.status, 408);
  });
});

describe('timeout: when the client goes away before the deadline', () => {
  it('should cancel its timer and never write a 408 to the dead connection', async () => {
    const app = express();
    app.use(timeout({ request_timeout: 1 }));
    let captured: http.ServerResponse | undefined;
    const arrived = new Promise<void>((resolve) => {
      app.get('/hang', (_req, res) => {
        captured = res;
        resolve();
      });
    });
    const server = http.createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const req = http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/hang' });
      req.on('error', () => {});
      await arrived;
      req.destroy();
      await once(captured!, 'close');
      await sleep(1300);
      assert.equal(captured!.writableEnded, false);
      assert.equal(captured!.headersSent, false);
    } finally {
      server.close();
    }
  });
});

describe('timeout: when request_timeout is null', () => {
  it('should return a pass-through that never answers 408', async () => {
    const mw = timeout({ request_timeout: null });
    assert.equal(mw.name, 'timeoutDisabled');
    const { app } = appWith({ request_timeout: null });
    const res = await request(app).get('/slow');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'late' });
  });

  it('should state the spec default as null', () => {
    assert.equal(DEFAULT_REQUEST_TIMEOUT, null);
  });
});

describe('timeout: when the options are invalid', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options at all', undefined, /"request_timeout" is required/],
    ['an empty object', {}, /"request_timeout" is required/],
    ['an unknown key, with a suggestion', { request_timout: 5 }, /Unknown key "request_timout".*Did you mean "request_timeout"/],
    ['zero seconds', { request_timeout: 0 }, /TimeoutOptions\.request_timeout: expected an integer >= 1, got 0/],
    ['negative seconds', { request_timeout: -1 }, /expected an integer >= 1, got -1/],
    ['fractional seconds', { request_timeout: 1.5 }, /expected an integer >= 1, got 1.5/],
    ['a string', { request_timeout: '5' }, /expected an integer >= 1, got "5"/],
    ['milliseconds by mistake as a string', { request_timeout: '5000ms' }, /got "5000ms"/],
    ['a bare number', 5, /expected an object/],
  ];
  for (const [what, input, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => timeout(input as TimeoutOptions), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});
});

describeOnReject('timeout, a handler that does not answer in time', {
  make: (onReject) => timeout({ request_timeout: 1, onReject }),
  route: (app) => {
    app.get('/', (_req, res) => {
      setTimeout(() => {
        if (!res.headersSent) res.json({ late: true });
      }, 1400);
    });
  },
  send: (agent) => agent.get('/'),
  status: 408,
  headers: ['Connection'],
  noPassOn: true,
  check: (err) => assert.equal(err.extensions.timeout, 1),
});
describeOnRejectConfig('timeout', (o) => timeout({ request_timeout: 1, ...o }), /TimeoutOptions/);

for (const { name: expressVersion, express } of EXPRESS_VERSIONS) {
  describe(`timeout: when onReject is 'next'under ${expressVersion}`, () => {
    it('should set req.timedout and discard what the late handler writes after the error handler answered', async () => {
      const app = express();
      let lateThrew: unknown = 'not run';
      let timedout: unknown;
      app.use(timeout({ request_timeout: 1, onReject: 'next' }));
      app.get('/', (req, res) => {
        setTimeout(() => {
          timedout = (req as { timedout?: boolean }).timedout;
          try {
            res.status(200).json({ late: true });
            lateThrew = undefined;
          } catch (e) {
            lateThrew = e;
          }
        }, 1200);
      });
      app.use((err: { status: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(err.status).json({ mine: true });
      });
      const res = await request(app).get('/');
      assert.equal(res.status, 408);
      assert.deepEqual(res.body, { mine: true });
      await sleep(400);
      assert.equal(timedout, true);
      assert.equal(lateThrew, undefined, 'the late write neither throws nor reaches the client');
    });
  });
}

describe('timeout: when requests arrive at different times on one instance (one queue, one timer)', () => {
  it('should give each request its own full deadline, after answered ones and before later ones', async () => {
    const mw = timeout({ request_timeout: 1 });
    const server = http.createServer((req, res) => {
      mw(req, res, () => {
        if (req.url === '/fast') res.end('ok');
        // /wait never answers: only the 408 does.
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const timed = async (path: string) => {
      const t0 = performance.now();
      const res = await fetch(base + path, { headers: { connection: 'close' } });
      await res.text();
      return { status: res.status, ms: performance.now() - t0 };
    };
    try {
      for (let i = 0; i < 5; i++) assert.equal((await timed('/fast')).status, 200);
      const first = timed('/wait');
      await sleep(500);
      for (let i = 0; i < 5; i++) assert.equal((await timed('/fast')).status, 200);
      const second = timed('/wait');
      const [a, b] = await Promise.all([first, second]);
      assert.equal(a.status, 408);
      assert.equal(b.status, 408);
      // Load only delays a timer: neither may be answered before its own second is up.
      assert.ok(a.ms >= 950, `first answered after ${a.ms.toFixed(0)} ms`);
      assert.ok(b.ms >= 950, `second answered after ${b.ms.toFixed(0)} ms (fired with the first's deadline?)`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { HttpError } from '../../lib/http/errors.js';
import { requestId } from '../request-id/index.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { problemHandler, defaultProblemLogger, type ProblemLogger } from './index.js';

function recorder(): ProblemLogger & { lines: { obj: Record<string, unknown>; msg?: string }[] } {
  const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
  return { lines, error: (obj, msg) => void lines.push({ obj, msg }) };
}

/** An http-errors-style error, as `createError(status, message)` builds it. */
function httpErrorsStyle(status: number, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: status < 500, ...extra });
}

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`problemHandler under ${name}`, () => {
    function appThrowing(err: unknown, logger: ProblemLogger | false = recorder()) {
      const app = express();
      app.use(requestId({ enabled: true }));
      app.get('/boom', () => {
        throw err;
      });
      app.get('/async', (_req, _res, next) => setImmediate(() => next(err)));
      app.use(problemHandler({ logger }));
      return app;
    }

    describe('when the error is a keel HttpError', () => {
      it('should answer its status, members, extensions and headers', async () => {
        const err = new HttpError(429, 'Slow down', { extensions: { limit: 3 }, headers: { 'Retry-After': '7', RateLimit: 'limit=3, remaining=0, reset=7' } });
        const res = await request(appThrowing(err)).get('/boom');
        assert.equal(res.status, 429);
        assert.match(res.headers['content-type']!, /^application\/problem\+json/);
        assert.equal(res.headers['retry-after'], '7');
        assert.equal(res.headers['ratelimit'], 'limit=3, remaining=0, reset=7');
        assert.deepEqual(res.body, { type: 'https://keel.dev/errors/rate-limit-exceeded', title: 'Too Many Requests', status: 429, detail: 'Slow down', limit: 3 });
      });

      it('should answer a 405 with its Allow header', async () => {
        const res = await request(appThrowing(new HttpError(405, 'No', { headers: { Allow: 'GET, HEAD' } }))).get('/async');
        assert.equal(res.status, 405);
        assert.equal(res.headers.allow, 'GET, HEAD');
      });
    });

    describe("when the error is an HttpError from another copy of keel", () => {
      it('should answer it by its shape, members and headers included', async () => {
        const copy = { ...new HttpError(401, 'No token', { headers: { 'WWW-Authenticate': 'Bearer' }, extensions: { hint: 'login' } }) };
        Object.assign(copy, { status: 401, title: 'Unauthorized', type: 'https://keel.dev/errors/unauthorized', detail: 'No token' });
        const res = await request(appThrowing(copy)).get('/boom');
        assert.equal(res.status, 401);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
        assert.deepEqual(res.body, { type: 'https://keel.dev/errors/unauthorized', title: 'Unauthorized', status: 401, detail: 'No token', hint: 'login' });
      });
    });

    describe('when the error is http-errors-style', () => {
      it('should show the message of an exposed 4xx', async () => {
        const res = await request(appThrowing(httpErrorsStyle(404, 'No such user'))).get('/boom');
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No such user' });
      });

      it('should hide the message when expose is false', async () => {
        const res = await request(appThrowing(httpErrorsStyle(400, 'secret table users_v2 broke', { expose: false }))).get('/boom');
        assert.equal(res.status, 400);
        assert.equal(res.body.detail, undefined);
        assert.doesNotMatch(res.text, /users_v2/);
      });

      it('should read statusCode when status is absent', async () => {
        const res = await request(appThrowing(Object.assign(new Error('gone'), { statusCode: 410, expose: true }))).get('/boom');
        assert.equal(res.status, 410);
        assert.equal(res.body.detail, 'gone');
      });

      it('should answer an unexposed 503 with its status and no message, and log it', async () => {
        const log = recorder();
        const res = await request(appThrowing(httpErrorsStyle(503, 'redis at 10.0.0.3 is down'), log)).get('/boom');
        assert.equal(res.status, 503);
        assert.doesNotMatch(res.text, /10\.0\.0\.3/);
        assert.equal(log.lines.length, 1);
      });

      it('should copy its well-formed headers', async () => {
        const res = await request(appThrowing(httpErrorsStyle(401, 'who?', { headers: { 'WWW-Authenticate': 'Basic', 'Bad Name': 'x' } }))).get('/boom');
        assert.equal(res.status, 401);
        assert.equal(res.headers['www-authenticate'], 'Basic');
      });

      it("should render express.json()'s 400 for malformed JSON", async () => {
        const app = express();
        app.use(express.json());
        app.post('/', (req, res) => res.json(req.body));
        app.use(problemHandler({ logger: false }));
        const res = await request(app).post('/').set('Content-Type', 'application/json').send('{"a":');
        assert.equal(res.status, 400);
        assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      });
    });

    describe('when the error is anything else', () => {
      for (const [label, err] of [
        ['an Error with a secret message', new Error('password=hunter2')],
        ['a string', 'password=hunter2'],
        ['a number', 42],
        ['an object with a bogus status', { status: 200, message: 'password=hunter2' }],
        ['an object with a status out of range', { status: 999, expose: true, message: 'password=hunter2' }],
      ] as const) {
        it(`should answer ${label} as a bare 500 and log it with the request id`, async () => {
          const log = recorder();
          const res = await request(appThrowing(err, log)).get('/async');
          assert.equal(res.status, 500);
          assert.deepEqual(res.body, { type: 'https://keel.dev/errors/internal-server-error', title: 'Internal Server Error', status: 500, detail: 'Internal server error' });
          assert.doesNotMatch(res.text, /hunter2/);
          assert.equal(log.lines.length, 1);
          assert.equal(log.lines[0]!.obj.err, err);
          assert.equal(log.lines[0]!.obj.request_id, res.headers['x-request-id']);
          assert.equal(log.lines[0]!.obj.status, 500);
          assert.equal(log.lines[0]!.obj.method, 'GET');
          assert.equal(log.lines[0]!.obj.route, '/async');
          assert.ok('trace_id' in log.lines[0]!.obj);
          assert.equal(log.lines[0]!.obj.url, '/async');
        });
      }
    });

    describe('when a 4xx is answered', () => {
      it('should not log it', async () => {
        const log = recorder();
        await request(appThrowing(new HttpError(404), log)).get('/boom');
        assert.equal(log.lines.length, 0);
      });
    });

    describe('when the response has already started', () => {
      it("should hand the error on to Express's own handler", async () => {
        const app = express();
        let handedOn: unknown;
        app.get('/', (_req, res, next) => {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.write('partial');
          next(new Error('late'));
        });
        app.use(problemHandler({ logger: false }));
        app.use((err: unknown, _req: unknown, res: { end(): void }, _next: unknown) => {
          handedOn = err;
          res.end();
        });
        const res = await request(app).get('/');
        assert.equal(res.status, 200);
        assert.equal((handedOn as Error).message, 'late');
      });
    });
  });
}

describe('problemHandler options', () => {
  it('should refuse a logger without error()', () => {
    assert.throws(() => problemHandler({ logger: {} as ProblemLogger }), /logger must be a pino logger/);
  });
  it('should refuse options that are not an object', () => {
    assert.throws(() => problemHandler('x' as never), /options must be an object/);
  });
  it('should take four parameters, which is how Express tells an error handler', () => {
    assert.equal(problemHandler().length, 4);
    assert.equal(problemHandler().name, 'problemHandler');
  });
  it('should stay silent by default under NODE_ENV=test', () => {
    const original = console.error;
    let called = false;
    console.error = () => void (called = true);
    try {
      defaultProblemLogger.error({ err: new Error('x') });
    } finally {
      console.error = original;
    }
    assert.equal(called, process.env.NODE_ENV !== 'test');
  });
});

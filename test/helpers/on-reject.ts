/**
 * The error-path tests every rejecting factory shares (`onReject`, lib/http/reject.ts), under Express 4
 * and Express 5: the default answer, `'next'` with an Express error handler after it, keel's
 * `problemHandler()`, and a handler function.
 *
 * A factory's test file calls `describeOnReject(...)` with a way to build its middleware and a request
 * it refuses; the helper checks that `'next'` hands on an HttpError carrying exactly what the
 * default answer would have said (status, members, extensions, the listed headers).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { HttpError } from '../../lib/http/errors.js';
import type { OnReject } from '../../lib/http/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { problemHandler } from '../../middleware/problem-handler/index.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from './express-versions.js';

export interface OnRejectCase {
  /** The middleware under test with this `onReject` (a new instance per call). */
  make: (onReject: OnReject | undefined) => Middleware | Middleware[];
  /** Send the refused request. */
  send: (agent: ReturnType<typeof request>) => request.Test;
  /** Expected status of the refusal. */
  status: number;
  /** Headers the refusal must carry, compared between the default answer and the handed-on error. */
  headers?: readonly string[];
  /** Extra checks of the handed-on error. */
  check?: (err: HttpError) => void;
  /** Leave out the pass-on case (a factory whose next() already ran, such as timeout). */
  noPassOn?: boolean;
  /** Route method; default any (`app.use`). */
  route?: (app: ReturnType<ExpressFactory>) => void;
}

function build(express: ExpressFactory, c: OnRejectCase, onReject: OnReject | undefined, after?: (err: unknown, req: KeelRequest, res: ServerResponse, next: NextFunction) => void) {
  const app = express();
  const mw = c.make(onReject);
  for (const m of Array.isArray(mw) ? mw : [mw]) app.use(m as never);
  if (c.route) c.route(app);
  else app.use((_req, res) => void res.json({ passed: true }));
  // Express knows an error handler by its four parameters.
  if (after) app.use(((err: unknown, req: KeelRequest, res: ServerResponse, next: NextFunction) => after(err, req, res, next)) as never);
  return app;
}

export function describeOnReject(title: string, c: OnRejectCase): void {
  for (const { name, express } of EXPRESS_VERSIONS) {
    describe(`${title}: onReject under ${name}`, () => {
      it('should answer the problem itself by default', async () => {
        let reached = false;
        const res = await c.send(request(build(express, c, undefined, (_e, _q, r) => void ((reached = true), r.end()))));
        assert.equal(res.status, c.status);
        assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
        assert.equal(reached, false, 'no error handler is called');
      });

      it("should hand an HttpError with everything the answer needs to next(err) with 'next'", async () => {
        const answered = await c.send(request(build(express, c, 'respond')));
        let seen: unknown;
        const res = await c.send(request(build(express, c, 'next', (err, _req, r) => {
          seen = err;
          (r as ServerResponse).statusCode = 599;
          r.end('custom');
        })));
        assert.equal(res.status, 599, 'the error handler after it answered');
        assert.ok(seen instanceof HttpError, 'an HttpError');
        const err = seen as HttpError;
        assert.equal(err.status, c.status);
        assert.equal(err.statusCode, c.status);
        assert.equal(err.expose, c.status < 500);
        const { type, title, status, detail, ...extensions } = answered.body as Record<string, unknown>;
        assert.deepEqual({ type: err.type, title: err.title, status: err.status, detail: err.detail }, { type, title, status, detail });
        assert.deepEqual({ ...err.extensions }, extensions);
        for (const h of c.headers ?? []) {
          const key = Object.keys(err.headers).find((k) => k.toLowerCase() === h.toLowerCase());
          assert.ok(key, `the error carries ${h}`);
          assert.equal(err.headers[key!], answered.headers[h.toLowerCase()], h);
        }
        c.check?.(err);
      });

      it('should get the same answer from problemHandler() as by default', async () => {
        const answered = await c.send(request(build(express, c, 'respond')));
        const handed = await c.send(request(build(express, c, 'next', problemHandler({ logger: false }) as never)));
        assert.equal(handed.status, answered.status);
        assert.deepEqual(handed.body, answered.body);
        assert.match(handed.headers['content-type'] ?? '', /^application\/problem\+json/);
        for (const h of c.headers ?? []) assert.equal(handed.headers[h.toLowerCase()], answered.headers[h.toLowerCase()], h);
      });

      it('should call a handler function with the error and let it answer', async () => {
        const res = await c.send(request(build(express, c, (err, _req, r) => {
          r.statusCode = 418;
          r.setHeader('Content-Type', 'application/json');
          r.end(JSON.stringify({ refused: err.status }));
        })));
        assert.equal(res.status, 418);
        assert.deepEqual(res.body, { refused: c.status });
      });

      if (!c.noPassOn) it('should let a handler function pass the request on with next()', async () => {
        const res = await c.send(request(build(express, c, (_err, _req, _res, next) => next())));
        assert.notEqual(res.status, c.status);
      });

      it("should give a throwing handler's error to Express's error handlers", async () => {
        let seen: unknown;
        await c.send(request(build(express, c, () => {
          throw new Error('handler bug');
        }, (err, _req, r) => {
          seen = err;
          r.end();
        })));
        assert.equal((seen as Error).message, 'handler bug');
      });
    });
  }
}

/** The ConfigErrors of a bad `onReject`, for a factory taking an options object. */
export function describeOnRejectConfig(title: string, make: (options: Record<string, unknown>) => unknown, record: RegExp): void {
  describe(`${title}: when onReject is invalid`, () => {
    for (const value of ['throw', 42, null, {}]) {
      it(`should throw a ConfigError for ${JSON.stringify(value)}`, () => {
        assert.throws(() => make({ onReject: value }), (e: Error) => e.name === 'ConfigError' && record.test(e.message) && /onReject/.test(e.message) && /'respond', 'next'/.test(e.message));
      });
    }
    it('should throw a ConfigError when both spellings are given', () => {
      assert.throws(() => make({ onReject: 'next', on_reject: 'next' }), (e: Error) => e.name === 'ConfigError' && /only one of "on_reject" and "onReject"/.test(e.message));
    });
    it('should accept the snake_case spelling', () => {
      assert.doesNotThrow(() => make({ on_reject: 'next' }));
    });
  });
}

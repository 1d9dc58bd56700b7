import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import pino from 'pino';
import { describe, it } from 'node:test';
import request from 'supertest';
import { App } from '../app/app.js';
import { handlerError } from '../app/handler.js';
import { clientHttpError } from './client-error.js';
import { HttpError, KeelError } from './errors.js';
import { toProblem } from './problem.js';

/** The HttpError the real constructor makes for a client error (no stack frames, as handlerError's). */
function real(status: number, message: string): HttpError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new HttpError(status, message);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Own properties other than message and stack, with their attributes and values, in order; then those two. */
function shape(e: object): unknown[] {
  const own = Reflect.ownKeys(e).filter((k) => k !== 'message' && k !== 'stack').map((k) => [k, Object.getOwnPropertyDescriptor(e, k)]);
  return [...own, (e as Error).message, (e as Error).stack, Object.keys(e), { ...e }];
}

describe('when a handler returns handlerError() with a 4xx', () => {
  for (const [status, message] of [[404, 'no such account'], [418, 'x'], [422, ''], [400, 'bad'], [409, 'Order 7 was changed']] as const) {
    it(`should be an HttpError like the constructor's (${status}, ${JSON.stringify(message)})`, () => {
      const light = clientHttpError(status, message);
      const made = real(status, message);
      assert.deepEqual(shape(light), shape(made));
      assert.ok(light instanceof HttpError && light instanceof KeelError && light instanceof Error);
      assert.equal(light.constructor, HttpError);
      assert.ok(!Object.keys(light).includes('message') && 'message' in light && 'stack' in light);
      assert.equal(light.statusCode, made.statusCode);
      assert.equal(light.expose, true);
      assert.equal(light.errorClass, made.errorClass);
      assert.equal(String(light), String(made));
      assert.deepEqual(toProblem(light), toProblem(made));
      assert.deepEqual(JSON.stringify(light), JSON.stringify(made));
      assert.equal(inspect(light), inspect(made));
      assert.equal(JSON.stringify(pino.stdSerializers.err(light)), JSON.stringify(pino.stdSerializers.err(made)));
    });
  }

  it('should write its stack line when first read, from the name and message then (as V8 does)', () => {
    for (const make of [clientHttpError, real]) {
      const e = make(404, 'a') as { message: string; name: string; stack?: string };
      e.message = 'changed';
      assert.equal(e.stack, 'HttpError: changed');
      e.name = 'Other';
      assert.equal(e.stack, 'HttpError: changed');
      e.stack = 'mine';
      assert.equal(e.stack, 'mine');
    }
  });

  it('should be the one handlerError() returns for a 4xx, and a real Error for a 5xx', () => {
    assert.deepEqual(shape(handlerError(404, 'x')), shape(clientHttpError(404, 'x')));
    const five = handlerError(503, 'down');
    assert.ok(five instanceof HttpError);
    assert.match(five.stack ?? '', /\n\s+at /);
  });

  it('should reach on_error hooks as an HttpError, and be answered as before without them', async () => {
    const app = new App({ port: 0 });
    let seen: unknown;
    app.onError((ctx) => {
      seen = ctx.error;
    });
    app.get('/a', () => handlerError(404, 'no such account'));
    const res = await request(app.intoRouter()).get('/a');
    assert.equal(res.status, 404);
    assert.ok(seen instanceof HttpError && seen.status === 404 && seen.message === 'no such account');
    const plain = new App({ port: 0 });
    plain.get('/a', () => handlerError(404, 'no such account'));
    const res2 = await request(plain.intoRouter()).get('/a');
    assert.equal(res2.status, 404);
    assert.equal(res2.headers['content-type'], 'application/problem+json');
    assert.deepEqual(JSON.parse(res2.text), { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'no such account' });
  });
});

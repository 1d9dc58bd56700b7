/**
 * The error table (lib/http/errors.ts): every code complete, every error class mapped into it, and the
 * configuration family kept apart from the request family.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ERROR_CODES, PROBLEM_TYPE_BASE, KeelError, ConfigError, AppError, SchemaError, SnapshotError, GraphQlError, HttpError,
  APP_ERROR_KINDS, SCHEMA_ERROR_KINDS, SNAPSHOT_ERROR_KINDS, GRAPHQL_ERROR_KINDS, problemType, codeForStatus, statusTitle,
  type ErrorCode,
} from '../lib/http/errors.js';

const codes = Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode] & { slug?: string }][];

describe('when the error table is read', () => {
  for (const [code, info] of codes) {
    it(`should give ${code} a status, a class and a title`, () => {
      assert.ok(Number.isInteger(info.status) && info.status >= 200 && info.status <= 599, `status ${info.status}`);
      assert.ok(['config', 'app', 'schema', 'request', 'graphql', 'snapshot'].includes(info.class), info.class);
      assert.equal(typeof info.title, 'string');
      assert.ok(info.title.length > 0);
      assert.match(code, /^KEEL_[A-Z0-9_]+$/);
    });
  }

  it('should give every request-class and graphql-class code a problem slug', () => {
    for (const [code, info] of codes) {
      if (info.class !== 'request' && info.class !== 'graphql') continue;
      assert.match(info.slug ?? '', /^[a-z0-9]+(-[a-z0-9]+)*$/, code);
      assert.equal(problemType(code), PROBLEM_TYPE_BASE + info.slug);
    }
  });

  it('should give configuration-class codes no slug (they never reach a client)', () => {
    for (const [code, info] of codes) {
      if (info.class === 'request' || info.class === 'graphql') continue;
      assert.equal(info.slug, undefined, code);
      assert.equal(problemType(code), 'about:blank');
    }
  });

  it('should use distinct slugs', () => {
    const slugs = codes.map(([, i]) => i.slug).filter(Boolean);
    assert.equal(new Set(slugs).size, slugs.length);
  });

  it('should be frozen', () => {
    assert.ok(Object.isFrozen(ERROR_CODES));
    assert.ok(Object.isFrozen(ERROR_CODES.KEEL_NOT_FOUND));
  });

  it('should keep the request errors at their real HTTP statuses', () => {
    assert.equal(ERROR_CODES.KEEL_VALIDATION_FAILED.status, 422);
    assert.equal(ERROR_CODES.KEEL_MALFORMED_JSON.status, 400);
    assert.equal(ERROR_CODES.KEEL_PAYLOAD_TOO_LARGE.status, 413);
    assert.equal(ERROR_CODES.KEEL_URI_TOO_LONG.status, 414);
    assert.equal(problemType('KEEL_URI_TOO_LONG'), 'https://keel.dev/errors/uri-too-long');
    assert.equal(ERROR_CODES.KEEL_UNSUPPORTED_MEDIA_TYPE.status, 415);
    assert.equal(ERROR_CODES.KEEL_METHOD_NOT_ALLOWED.status, 405);
    assert.equal(ERROR_CODES.KEEL_NOT_FOUND.status, 404);
  });
});

describe('when AppError, GraphQlError, SchemaError and SnapshotError are built', () => {
  const families: Array<[string, readonly string[], (kind: string) => KeelError, string]> = [
    ['AppError', APP_ERROR_KINDS, (k) => new AppError(k as never, 'm'), 'app'],
    ['GraphQlError', GRAPHQL_ERROR_KINDS, (k) => new GraphQlError(k as never, 'm'), 'graphql'],
    ['SchemaError', SCHEMA_ERROR_KINDS, (k) => new SchemaError(k as never, 'm'), 'schema'],
    ['SnapshotError', SNAPSHOT_ERROR_KINDS, (k) => new SnapshotError(k as never, 'm'), 'snapshot'],
  ];

  it('should have the specification number of kinds', () => {
    assert.equal(APP_ERROR_KINDS.length, 4);
    assert.equal(GRAPHQL_ERROR_KINDS.length, 16);
    assert.equal(SCHEMA_ERROR_KINDS.length, 4);
    assert.equal(SNAPSHOT_ERROR_KINDS.length, 2);
  });

  for (const [name, kinds, make, cls] of families) {
    for (const kind of kinds) {
      it(`should map ${name}(${kind}) to a code of class ${cls} in the table`, () => {
        const err = make(kind);
        assert.ok(err.code in ERROR_CODES, `${err.code} missing from ERROR_CODES`);
        assert.equal(err.errorClass, cls);
        assert.equal(err.status, ERROR_CODES[err.code].status);
        assert.equal((err as unknown as { kind: string }).kind, kind);
        assert.equal(err.name, name);
        assert.ok(err instanceof KeelError && err instanceof Error);
      });
    }
  }

  it('should map each kind of one family to its own code', () => {
    for (const [, kinds, make] of families) {
      const seen = new Set(kinds.map((k) => make(k).code));
      assert.equal(seen.size, kinds.length);
    }
  });

  it('should keep the cause', () => {
    const cause = new Error('root');
    assert.equal(new AppError('Server', 'x', { cause }).cause, cause);
  });

  it('should carry InvalidInput details', () => {
    const err = new GraphQlError('InvalidInput', 'bad', { details: [{ field: 'email' }] });
    assert.deepEqual(err.details, [{ field: 'email' }]);
  });
});

describe('when configuration and request errors are compared', () => {
  const config = new ConfigError('bad', { record: 'ServerConfig', path: 'ServerConfig.port', key: 'port', value: -1 });
  const request = new HttpError(404, 'gone');

  it('should be different classes', () => {
    assert.equal(config instanceof HttpError, false);
    assert.equal(request instanceof ConfigError, false);
    assert.equal(config.errorClass, 'config');
    assert.equal(request.errorClass, 'request');
  });

  it('should carry the record, path, key and value on a ConfigError', () => {
    assert.equal(config.record, 'ServerConfig');
    assert.equal(config.path, 'ServerConfig.port');
    assert.equal(config.key, 'port');
    assert.equal(config.value, -1);
    assert.equal(config.code, 'KEEL_CONFIG_INVALID');
  });

  it('should put AppError in the app class, never the request class', () => {
    for (const kind of APP_ERROR_KINDS) assert.equal(new AppError(kind, 'x').errorClass, 'app');
  });
});

describe('when an HttpError is built', () => {
  it('should take the code, title and type of its status', () => {
    const e = new HttpError(404, 'No such user');
    assert.equal(e.status, 404);
    assert.equal(e.code, 'KEEL_NOT_FOUND');
    assert.equal(e.title, 'Resource Not Found');
    assert.equal(e.type, PROBLEM_TYPE_BASE + 'not-found');
    assert.equal(e.detail, 'No such user');
    assert.equal(e.message, 'No such user');
  });

  it('should use the reason phrase and about:blank for a status keel has no code for', () => {
    const e = new HttpError(418, 'short and stout');
    assert.equal(e.status, 418);
    assert.equal(e.title, "I'm a Teapot");
    assert.equal(e.type, 'about:blank');
  });

  it('should use about:blank for a 5xx status other than 500 and 503', () => {
    const e = new HttpError(502, 'upstream');
    assert.equal(e.status, 502);
    assert.equal(e.title, 'Bad Gateway');
    assert.equal(e.type, 'about:blank');
  });

  it('should accept an explicit code, title, type, extensions and headers', () => {
    const e = new HttpError(429, 'slow down', { code: 'KEEL_RATE_LIMITED', extensions: { retry_after: 3 }, headers: { 'Retry-After': '3' } });
    assert.equal(e.type, PROBLEM_TYPE_BASE + 'rate-limit-exceeded');
    assert.deepEqual(e.extensions, { retry_after: 3 });
    assert.deepEqual(e.headers, { 'Retry-After': '3' });
  });

  it('should map statuses to codes', () => {
    assert.equal(codeForStatus(400), 'KEEL_BAD_REQUEST');
    assert.equal(codeForStatus(422), 'KEEL_VALIDATION_FAILED');
    assert.equal(codeForStatus(414), 'KEEL_URI_TOO_LONG');
    assert.equal(codeForStatus(500), 'KEEL_INTERNAL');
    assert.equal(codeForStatus(504), 'KEEL_HANDLER_ERROR');
    assert.equal(statusTitle(404), 'Not Found');
  });
});

describe('when a client error is built (issue 48: errors as cheap as successes)', () => {
  it('should capture no stack frames for a status below 500', () => {
    const err = new HttpError(422, 'bad');
    assert.equal(err.stack, 'HttpError: bad');
    assert.ok(err instanceof HttpError && err instanceof KeelError && err instanceof Error);
  });

  it('should keep the frames of a 5xx and restore Error.stackTraceLimit', () => {
    const before = Error.stackTraceLimit;
    new HttpError(404);
    assert.equal(Error.stackTraceLimit, before);
    const err = new HttpError(503, 'down');
    assert.match(err.stack ?? '', /\n\s+at /);
  });

  it('should list the class names once per class, still recognised by instanceof', () => {
    const a = new HttpError(400);
    const b = new HttpError(404);
    assert.equal(Object.getOwnPropertySymbols(a).length, 0);
    const key = Symbol.for('keel.error.classes');
    assert.deepEqual((a as unknown as Record<symbol, unknown>)[key], ['HttpError', 'KeelError']);
    assert.equal((a as unknown as Record<symbol, unknown>)[key], (b as unknown as Record<symbol, unknown>)[key]);
    // An error of another copy of keel: a plain Error carrying the names.
    const foreign = Object.assign(new Error('x'), { [key]: ['HttpError', 'KeelError'] });
    assert.ok(foreign instanceof HttpError);
    assert.ok(!(new ConfigError('m', { record: 'R', path: 'R', key: 'k' }) instanceof HttpError));
  });
});

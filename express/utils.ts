/**
 * Settings compilers and small helpers of the Express engine, ported from Express's lib/utils.js
 * (Copyright (c) 2009-2014 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import { METHODS } from 'node:http';
import { createRequire } from 'node:module';
import querystring from 'node:querystring';
import etag from 'etag';
import proxyaddr from 'proxy-addr';
import type qsTypes from 'qs';

const require = createRequire(import.meta.url);
let qsLib: typeof qsTypes | undefined;
/** `qs`, loaded by the first extended parse (it costs ~40 ms of CPU to load): an app on Express 5's default
 * 'simple' parser never loads it through the engine. The require call stays literal, for bundlers. */
export function qs(): typeof qsTypes {
  return (qsLib ??= require('qs') as typeof qsTypes);
}

/** Every method node's HTTP parser knows, lower-cased: one app/router/route function each, as in Express. */
export const methods: readonly string[] = METHODS.map((m) => m.toLowerCase());

export type AnyFn = (...args: any[]) => any;

/** A strong ETag of a body, as Express's `etag fn` for `etag: 'strong'`. */
export function strongETag(body: string | Buffer, encoding?: BufferEncoding): string {
  return etag(Buffer.isBuffer(body) ? body : Buffer.from(body, encoding), { weak: false });
}

/** A weak ETag of a body, Express's default (`etag: 'weak'`). */
export function weakETag(body: string | Buffer, encoding?: BufferEncoding): string {
  return etag(Buffer.isBuffer(body) ? body : Buffer.from(body, encoding), { weak: true });
}

/** The function for the `etag` setting (true/'weak', 'strong', false, or a function). */
export function compileETag(val: unknown): AnyFn | undefined {
  if (typeof val === 'function') return val as AnyFn;
  switch (val) {
    case true:
    case 'weak':
      return weakETag;
    case false:
      return undefined;
    case 'strong':
      return strongETag;
    default:
      throw new TypeError('unknown value for etag function: ' + String(val));
  }
}

/** `qs` with prototypes allowed: what Express's 'extended' parser has always done. */
export function parseExtendedQueryString(str: string): Record<string, unknown> {
  return qs().parse(str, { allowPrototypes: true });
}

/** The function for the `query parser` setting (true/'simple', 'extended', false, or a function). */
export function compileQueryParser(val: unknown): AnyFn | undefined {
  if (typeof val === 'function') return val as AnyFn;
  switch (val) {
    case true:
    case 'simple':
      return querystring.parse;
    case false:
      return undefined;
    case 'extended':
      return parseExtendedQueryString;
    default:
      throw new TypeError('unknown value for query parser function: ' + String(val));
  }
}

/** The function for the `trust proxy` setting (boolean, hop count, comma list, array, or a function). */
export function compileTrust(val: unknown): AnyFn {
  if (typeof val === 'function') return val as AnyFn;
  if (val === true) return function trustAll() { return true; };
  if (typeof val === 'number') return function trustHops(_a: string, i: number) { return i < val; };
  let list = val;
  if (typeof list === 'string') list = list.split(',').map((v) => v.trim());
  return proxyaddr.compile((list || []) as string[]);
}

/** Whether a handler's return value is a thenable, as the `is-promise` package the router uses decides. */
export function isPromise(value: unknown): value is PromiseLike<unknown> {
  return !!value && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Whether the request's app forwards a rejected promise of a handler to next(err) under Express 4's semantics:
 * keel/express4's `'async errors'` setting (express-async-errors' behaviour; Express 5 always does). Read only
 * when a handler returned a promise, so an app that does not set it pays nothing.
 */
export function asyncErrors(req: any): boolean {
  const app = req.app;
  return app != null && typeof app.enabled === 'function' && app.enabled('async errors') === true;
}

/** Array.prototype.flat to any depth, over the arguments from `offset` on. */
export function flattenArgs(args: ArrayLike<unknown>, offset: number): unknown[] {
  return Array.prototype.slice.call(args, offset).flat(Infinity);
}

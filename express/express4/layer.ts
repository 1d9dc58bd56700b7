/**
 * Express 4's router layer: paths matched with path-to-regexp 0.1 (optional params `:id?`, a bare `*`, `:a.:b`),
 * every param decoded, `regexp` and `keys` exposed as Express 4's layers expose them, and only synchronous errors
 * caught unless the app enables 'async errors'. Ported from Express 4's lib/router/layer.js (Copyright (c)
 * 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import { createRequire } from 'node:module';
import type pathToRegexp0 from 'path-to-regexp-v0';
import { decodeParam, Layer, type LayerMatch, type LayerOptions } from '../router/layer.js';
import { channelsOf } from '../router/channels.js';
import { asyncErrors, type AnyFn } from '../utils.js';

const require = createRequire(import.meta.url);
// path-to-regexp 0.1 loaded by the first layer: keel/express never loads it (literal require, for bundlers)
let compile0: typeof pathToRegexp0 | undefined;
const hasOwn = Object.prototype.hasOwnProperty;

export class Layer4 extends Layer {
  /** path-to-regexp 0.1's regexp and keys, which some tools read. */
  declare regexp: RegExp;
  declare keys: Array<{ name: string | number }>;
  declare private keyNames: readonly string[];
  declare private star: boolean;

  /** Compiles with path-to-regexp 0.1; the path is kept as given. */
  protected override compile(path: any, options: LayerOptions): any {
    const keys: Array<{ name: string | number }> = [];
    this.regexp = (compile0 ??= require('path-to-regexp-v0') as typeof pathToRegexp0)(path, keys as any, options);
    this.keys = keys;
    this.keyNames = keys.map((k) => String(k.name));
    this.star = path === '*';
    return path;
  }

  // Express 4's decode_param decodes every non-empty param; decodeParam skips those without '%', which
  // decodeURIComponent would return unchanged, so the answers are the same.
  override match(path: string): LayerMatch | false {
    if (this.slash) return super.match(path);
    if (this.star) return { params: { 0: decodeParam(path) }, path, keys: this.keyNames };
    const m = this.regexp.exec(path);
    if (!m) return false;
    const params: Record<string, any> = {};
    const keys = this.keys;
    for (let i = 1; i < m.length; i++) {
      const prop = keys[i - 1]!.name;
      const val = decodeParam(m[i]);
      if (val !== undefined || !hasOwn.call(params, prop)) params[prop] = val;
    }
    return { params, path: m[0], keys: this.keyNames };
  }

  /** Express 4 catches synchronous errors only, unless the app enables 'async errors' (express-async-errors). */
  override forwardsRejection(req: any): boolean {
    return asyncErrors(req);
  }

  /**
   * Express 4's names of the two runs, the ones packages patch (`Layer.prototype.handle_request`): the engine calls
   * handleRequest/handleError, which go through them, so a patch of either applies as on Express 4.
   */
  handle_request(req: any, res: any, next: AnyFn): void {
    super.handleRequest(req, res, next);
  }

  handle_error(error: unknown, req: any, res: any, next: AnyFn): void {
    super.handleError(error, req, res, next);
  }

  override handleRequest(req: any, res: any, next: AnyFn): void {
    this.handle_request(req, res, next);
  }

  override handleError(error: unknown, req: any, res: any, next: AnyFn): void {
    this.handle_error(error, req, res, next);
  }
}
// Express 4 has its router in its own lib/router: its channels are the `express` module's
Object.defineProperty(Layer4.prototype, 'channels', { configurable: true, writable: true, value: channelsOf('express') });

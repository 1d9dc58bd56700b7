/**
 * Express 4's Route: the same dispatch as Express 5's, with Express 4's layers (express4/layer.ts), its messages
 * for a missing or non-function handler (none at all is allowed), methods in a plain object, and its method list
 * for an automatic OPTIONS answer (`_options`, `_all` included). Ported from Express 4's lib/router/route.js
 * (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import { Route } from '../router/route.js';
import { flattenArgs, type AnyFn } from '../utils.js';
import { Layer4 } from './layer.js';

const toString = Object.prototype.toString;

export class Route4 extends Route {
  constructor(path: any) {
    super(path);
    this.methods = {};
  }

  /** Express 4's name for the method list, `_all` included as Express 4 lists it. */
  _options(): string[] {
    const list = Object.keys(this.methods);
    if (this.methods.get && !this.methods.head) list.push('head');
    for (let i = 0; i < list.length; i++) list[i] = list[i]!.toUpperCase();
    return list;
  }

  /** Express 4's name for _handlesMethod. */
  _handles_method(method: unknown): boolean {
    return this._handlesMethod(method);
  }

  protected override add(method: string | undefined, name: string, args: unknown[]): this {
    for (const fn of flattenArgs(args, 0)) {
      if (typeof fn !== 'function') {
        const msg = 'Route.' + name + '() requires a callback function but got a ' + toString.call(fn);
        throw method === undefined ? new TypeError(msg) : new Error(msg);
      }
      this.push(method, new Layer4('/', {}, fn as AnyFn));
    }
    return this;
  }
}

/**
 * A route: the handlers of one path, per method. Ported from the `router` package's lib/route.js (Copyright (c)
 * 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT). Express 4's Route is
 * its overlay's subclass, express4/route.ts.
 */
import { methods, flattenArgs, type AnyFn } from '../utils.js';
import { runLayer } from './channels.js';
import { Layer } from './layer.js';

const toString = Object.prototype.toString;

/** Lower-cased request methods: `req.method.toLowerCase()` allocates a new string on every call, twice per request. */
const LOWER: ReadonlyMap<string, string> = new Map(methods.map((m) => [m.toUpperCase(), m]));
function lower(method: string): string {
  // the usual methods first: node's parser gives interned strings, compared by identity, cheaper than a map lookup
  switch (method) {
    case 'GET': return 'get';
    case 'POST': return 'post';
    case 'HEAD': return 'head';
    case 'PUT': return 'put';
    case 'DELETE': return 'delete';
    case 'PATCH': return 'patch';
    case 'OPTIONS': return 'options';
  }
  return LOWER.get(method) ?? method.toLowerCase();
}

export interface Route {
  [method: string]: any;
}

export class Route {
  path: any;
  stack: Layer[] = [];
  methods: Record<string, boolean>;

  constructor(path: any) {
    this.path = path;
    this.methods = Object.create(null);
  }

  /** Whether this route answers `method` (HEAD falls back to GET). */
  _handlesMethod(method: unknown): boolean {
    if (this.methods._all) return true;
    let name = typeof method === 'string' ? lower(method) : (method as string);
    if (name === 'head' && !this.methods.head) name = 'get';
    return Boolean(this.methods[name]);
  }

  /** The methods this route answers, upper-cased, with the automatic HEAD of a GET. */
  _methods(includeAll?: boolean): string[] {
    const list: string[] = [];
    for (const method of Object.keys(this.methods)) {
      if (method === '_all') {
        if (includeAll) list.push('*');
      } else list.push(method.toUpperCase());
    }
    if (this.methods.get && !this.methods.head) list.push('HEAD');
    return list;
  }

  /** Runs the handlers for req.method in order; `next('route')` leaves the route, `next('router')` the router. */
  dispatch(req: any, res: any, done: AnyFn): void {
    let idx = 0;
    const stack = this.stack;
    let sync = 0;
    if (stack.length === 0) { done(); return; }
    let method = typeof req.method === 'string' ? lower(req.method) : req.method;
    if (method === 'head' && !this.methods.head) method = 'get';
    req.route = this;
    next();

    function next(err?: any): void {
      if (err && err === 'route') { done(); return; }
      if (err && err === 'router') { done(err); return; }
      if (idx >= stack.length) { done(err); return; }
      if (++sync > 100) { setImmediate(next, err); return; }
      let layer: Layer | undefined;
      let match = false;
      while (!match && idx < stack.length) {
        layer = stack[idx++]!;
        match = !layer.method || layer.method === method;
      }
      if (!match) { done(err); return; }
      if (err) layer!.handleError(err, req, res, next);
      else runLayer(layer!, req, res, next);
      sync = 0;
    }
  }

  all(...args: unknown[]): this {
    return this.add(undefined, 'all', args);
  }

  protected add(method: string | undefined, _name: string, args: unknown[]): this {
    const callbacks = flattenArgs(args, 0);
    if (callbacks.length === 0) throw new TypeError('argument handler is required');
    for (const fn of callbacks) {
      if (typeof fn !== 'function') throw new TypeError('argument handler must be a function');
      this.push(method, new Layer('/', {}, fn as AnyFn));
    }
    return this;
  }

  /** Adds a method's layer (undefined: every method). */
  protected push(method: string | undefined, layer: Layer): void {
    layer.method = method;
    this.methods[method === undefined ? '_all' : method] = true;
    this.stack.push(layer);
  }

  static {
    for (const method of methods) {
      (Route.prototype as any)[method] = function verb(this: Route, ...args: unknown[]) {
        return (this as any).add(method, method, args);
      };
    }
  }
}


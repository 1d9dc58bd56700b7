/**
 * View lookup and rendering for app.render, ported from Express's lib/view.js (Copyright (c) 2009-2013 TJ
 * Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { AnyFn } from './utils.js';

// view engines are loaded by the name of the extension, from the app's point of view (its working directory)
const requireFromApp = createRequire(join(process.cwd(), 'noop.js'));

/** Options of a View (Express's `view` setting constructor gets the same). */
export interface ViewOptions {
  defaultEngine?: string;
  root: string | string[];
  engines: Record<string, AnyFn>;
}

function tryStat(path: string): fs.Stats | undefined {
  try {
    return fs.statSync(path);
  } catch {
    return undefined;
  }
}

export class View {
  defaultEngine: string | undefined;
  ext: string;
  name: string;
  root: string | string[];
  engine: AnyFn;
  path: string | undefined;

  constructor(name: string, options: ViewOptions) {
    const opts = options || ({} as ViewOptions);
    this.defaultEngine = opts.defaultEngine;
    this.ext = extname(name);
    this.name = name;
    this.root = opts.root;
    if (!this.ext && !this.defaultEngine) {
      throw new Error('No default engine was specified and no extension was provided.');
    }
    let fileName = name;
    if (!this.ext) {
      this.ext = this.defaultEngine![0] !== '.' ? '.' + this.defaultEngine : this.defaultEngine!;
      fileName += this.ext;
    }
    if (!opts.engines[this.ext]) {
      const mod = this.ext.slice(1);
      const fn = requireFromApp(mod).__express;
      if (typeof fn !== 'function') throw new Error('Module "' + mod + '" does not provide a view engine.');
      opts.engines[this.ext] = fn;
    }
    this.engine = opts.engines[this.ext]!;
    this.path = this.lookup(fileName);
  }

  /** The file of a view name in the first root that has it. */
  lookup(name: string): string | undefined {
    let path: string | undefined;
    const roots = ([] as string[]).concat(this.root);
    for (let i = 0; i < roots.length && !path; i++) {
      const loc = resolve(roots[i]!, name);
      path = this.resolve(dirname(loc), basename(loc));
    }
    return path;
  }

  /** Renders with the engine; a synchronous engine callback is deferred to the next tick, as Express does. */
  render(options: object, callback: AnyFn): void {
    let sync = true;
    this.engine(this.path, options, function onRender(this: unknown, ...args: unknown[]) {
      if (!sync) return callback.apply(this, args);
      const cntx = this;
      return process.nextTick(function renderTick() { return callback.apply(cntx, args); });
    });
    sync = false;
  }

  /** `<dir>/<file>` or `<dir>/<file without ext>/index<ext>`. */
  resolve(dir: string, file: string): string | undefined {
    const ext = this.ext;
    let path = join(dir, file);
    let stat = tryStat(path);
    if (stat && stat.isFile()) return path;
    path = join(dir, basename(file, ext), 'index' + ext);
    stat = tryStat(path);
    if (stat && stat.isFile()) return path;
    return undefined;
  }
}

/**
 * A start-up warning when a package patched the real Express 4's files while the app runs on keel/express4.
 * express-async-errors (and packages like it) `require('express/lib/router/layer')` and redefine
 * `Layer.prototype`; keel/express4 does not use Express's files, so such a patch changes nothing and the app loses
 * the behaviour it relied on without a word: the first rejected promise of a handler is an unhandled rejection.
 *
 * Checked once per process, a tick after the first `express()` of keel/express4 (so a package required right
 * after creating the app is seen too), by looking at the Express 4 Layer modules in require()'s cache (a
 * `lib/router/layer.js` exporting Express 4's `Layer`, whatever the package directory is called): the only
 * cheap and honest signal there is. It sees packages that change Express 4's `Layer.prototype` through require();
 * it cannot see a patch made later, or one of another file.
 */
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { KEEL_LAYER } from './router/layer.js';

/** Node's warning code of the message (process.on('warning') listeners can match it). */
export const EXPRESS_PATCHED_WARNING = 'KEEL_EXPRESS_PATCHED';
/** What Express 4's lib/router/layer.js defines on Layer.prototype; anything else was added by a patch. */
const EXPRESS4_LAYER_PROTOTYPE = new Set(['constructor', 'handle_error', 'handle_request', 'match']);
const LAYER_FILE = `${sep}lib${sep}router${sep}layer.js`;

let scheduled = false;

/** Schedules the check (once per process). */
export function checkPatchedExpress(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(warnIfPatched).unref();
}

/** The files of Express 4 Layer modules in require()'s cache whose prototype a package changed. */
export function patchedExpressLayers(): string[] {
  const cache = createRequire(import.meta.url).cache;
  const patched: string[] = [];
  for (const file of Object.keys(cache)) {
    if (!file.endsWith(LAYER_FILE)) continue;
    // Express 4's Layer (Express 5's router names its method handleRequest), wherever the package is installed
    const Layer: unknown = cache[file]?.exports;
    // keel's own Layer (keel's alias package installed as `express` has it as lib/router/layer.js): a patch of it
    // applies, so it is no misfire to warn about
    if (typeof Layer === 'function' && (Layer as any)[KEEL_LAYER] === true) continue;
    const proto = typeof Layer === 'function' && Layer.name === 'Layer' ? (Layer.prototype as any) : undefined;
    if (typeof proto?.handle_request !== 'function') continue;
    if (Object.getOwnPropertyNames(proto).some((name) => !EXPRESS4_LAYER_PROTOTYPE.has(name))) {
      patched.push(file);
    }
  }
  return patched;
}

function warnIfPatched(): void {
  const files = patchedExpressLayers();
  if (files.length === 0) return;
  process.emitWarning(
    `a package patched Express's own ${files.join(', ')} (express-async-errors does), but this app runs on ` +
    "keel/express4, which does not use Express's files: the patch has no effect. For express-async-errors' " +
    "behaviour (a rejected promise of a handler goes to next(err)), remove it and set app.set('async errors', " +
    'true); keel/express (Express 5) always does. See docs/express-engine.md.',
    { type: 'KeelWarning', code: EXPRESS_PATCHED_WARNING },
  );
}

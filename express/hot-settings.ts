/**
 * The settings every response reads ('x-powered-by', 'etag fn', 'json replacer', 'json spaces', 'json escape'),
 * read once per change of any app's settings instead of on every request.
 *
 * Why: an app's settings are a null-prototype object (Express 5) or a plain one read up the mount chain with
 * hasOwnProperty (Express 4), keyed by names with spaces; each `app.get(name)` is a call through app.set and a
 * dictionary lookup V8 cannot inline, five of them per JSON answer. The snapshot is taken with `app.get`, so an app
 * whose get/set a package wrapped answers as before.
 *
 * When it is taken again: every app.set (on any app: a mounted app reads its parent's settings through its
 * prototype chain) and every mount bump one generation counter, and a snapshot of an older generation is stale.
 * Writing into `app.settings` directly (not through app.set) is seen after the next app.set of any app.
 */

/** The generation of all apps' settings; a snapshot holds while it is the same. */
let generation = 0;

/** Marks the settings of some app as changed (app.set, a mount): every snapshot is taken again on its next read. */
export function settingsChanged(): void {
  generation++;
}

/** What a response reads of its app's settings, as of one generation. */
export interface HotSettings {
  readonly generation: number;
  readonly poweredBy: boolean;
  readonly etagFn: unknown;
  readonly jsonReplacer: unknown;
  readonly jsonSpaces: unknown;
  readonly jsonEscape: unknown;
}

const kHot = Symbol('keel.express.hotSettings');

/** The app's hot settings, read again only when some app's settings changed since the last read. */
export function hotSettings(app: any): HotSettings {
  const cached: HotSettings | undefined = app[kHot];
  if (cached !== undefined && cached.generation === generation) return cached;
  const hot: HotSettings = {
    generation,
    poweredBy: Boolean(app.get('x-powered-by')),
    etagFn: app.get('etag fn'),
    jsonReplacer: app.get('json replacer'),
    jsonSpaces: app.get('json spaces'),
    jsonEscape: app.get('json escape'),
  };
  app[kHot] = hot;
  return hot;
}

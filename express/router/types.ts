import type { AnyFn } from '../utils.js';
import type { Layer, LayerRoute } from './layer.js';
import type { LayerIndex } from './layer-index.js';

/** What router.handle reads from a router (the fields Express's routers have, plus the index and the rules). */
export interface RouterState {
  stack: Layer[];
  params: Record<string, AnyFn[]>;
  mergeParams?: boolean;
  caseSensitive?: boolean;
  strict?: boolean;
  _index?: LayerIndex;
  readonly rules: RouterRules;
}

/**
 * The points where a pass through a router follows rules of its own kind: Express 5's are router/rules.ts, on the
 * prototype of every keel/express router; Express 4's (express4/router.ts) replace them on keel/express4's.
 */
export interface RouterRules {
  /** Which first path segments the layer index buckets: a plain literal that cannot mean more. */
  readonly literal: RegExp;
  /** Whether the character after a matched mount path ('' at the end) ends it, so the mount applies. */
  endsMountPath(c: string | undefined): boolean;
  /** After a mount removed `removed` and a leading '/' was added to `url`, whether to take that '/' off again. */
  unslash(url: string, removed: string): boolean;
  /** Adds the methods `route` answers to an OPTIONS request's list. */
  allow(methods: string[], route: LayerRoute): void;
  /** The automatic answer to OPTIONS (the methods of every route that matched), or `done` when none did. */
  optionsAnswer(done: AnyFn, res: any, methods: string[]): AnyFn;
  /** Whether a rejected promise a param callback returned goes to next(err). */
  forwardsRejection(req: any): boolean;
  /** Called with each matched layer and the part of the path it matched. */
  matched(layer: Layer, path: string): void;
}

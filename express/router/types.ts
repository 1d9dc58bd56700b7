import type { AnyFn } from '../utils.js';
import type { Layer } from './layer.js';
import type { LayerIndex } from './layer-index.js';

/** What router.handle reads from a router (the fields Express's routers have, plus the index). */
export interface RouterState {
  stack: Layer[];
  params: Record<string, AnyFn[]>;
  mergeParams?: boolean;
  caseSensitive?: boolean;
  strict?: boolean;
  readonly v4: boolean;
  _index?: LayerIndex;
}

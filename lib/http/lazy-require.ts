/**
 * A third-party package loaded the first time a factory that needs it runs, not when its module is
 * imported: `keel` and `keel/middleware/*` load only what the configured features use (an App without
 * JWT auth never loads jose and fast-jwt). Synchronous, so factories stay synchronous: CommonJS
 * packages directly, ES modules (jose) through require(esm) (Node ≥ 20.19 / 22.12, keel's engines).
 * Only for third-party packages: keel's own modules are imported, so there is one copy of each.
 */
import { createRequire } from 'node:module';

const requireFromKeel = createRequire(import.meta.url);

/** `() => module`, loading `id` on the first call. */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireFromKeel(id) as T);
}

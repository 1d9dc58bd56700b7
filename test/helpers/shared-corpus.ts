/**
 * The shared conformance corpus (MIT data in ../shared/conformance) is read in place, never copied
 * into the repository. When it is absent, tests skip with a visible reason.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SHARED_CORPUS = join(process.cwd(), '..', 'shared', 'conformance');

/** The one-case-per-file documents of `testing_data/<category>` (not its schema.json), sorted. */
export function sharedCaseFiles(category: string): { dir: string; files: string[] } {
  const dir = join(SHARED_CORPUS, 'testing_data', category);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /^\d+[_-].*\.json$/.test(f)).sort() : [];
  return { dir, files };
}

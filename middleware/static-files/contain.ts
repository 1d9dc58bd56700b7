/**
 * Where a file really is, for the serve-static form: `send` refuses `..` in the URL but follows
 * symlinks, so a link inside the root pointing outside it would be served. The real path (every symlink
 * resolved) must lie under the root's real path.
 */
import { promises as fsp } from 'node:fs';
import { relative, sep } from 'node:path';

/** Why a found file is not served. */
export const ESCAPED = Object.freeze({
  /** Its real path is outside the root's. */
  outside: Symbol('outside'),
  /** Its real path has a segment starting with `.` below the root (`env.txt -> .env`). */
  dotfile: Symbol('dotfile'),
  /** It vanished between `send`'s stat and the realpath. */
  missing: Symbol('missing'),
});
type Escaped = (typeof ESCAPED)[keyof typeof ESCAPED];

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP']);

/**
 * The real path of `file` when it lies under the real path of `root` (which may itself be the file,
 * serve-static's "root as a file"), else why not. `checkDots`: report a dot segment below the root.
 */
export async function containedRealPath(root: string, file: string, checkDots: boolean): Promise<string | Escaped> {
  let realRoot: string;
  let real: string;
  try {
    [realRoot, real] = await Promise.all([fsp.realpath(root), fsp.realpath(file)]);
  } catch (err) {
    if (MISSING.has((err as NodeJS.ErrnoException).code ?? '')) return ESCAPED.missing;
    throw err;
  }
  if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) return ESCAPED.outside;
  if (checkDots && relative(realRoot, real).split(sep).some((s) => s.startsWith('.'))) return ESCAPED.dotfile;
  return real;
}

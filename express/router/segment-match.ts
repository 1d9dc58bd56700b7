/**
 * A matcher for the paths most routes have: literal segments and named parameters ('/users/:id'), compiled to a
 * walk over the path's characters instead of path-to-regexp 8's regular expression.
 *
 * Why: every request matches at least two such layers (a mount such as '/api/:version', then a route such as
 * '/users/:id'); the regexp's exec allocates its match array and one string per capture before the params are
 * decoded. The walk gives exactly what path-to-regexp 8's `match` gives for these patterns (the same `path` and
 * null-prototype `params`, decoded by the same function), which express/router/segment-match.test.ts checks against
 * path-to-regexp itself; any other pattern (wildcards, braces, escapes, quoted or duplicate names, characters
 * outside the plain set) keeps path-to-regexp.
 *
 * What the regexp is, for a pattern of literal and `:name` segments: `^(?:\/lit\/([^\/]+))` then, with
 * `trailing`, an optional final '/' (`(?:\/$)?`), then `$` when `end`, else `(?=\/|$)`; the `i` flag unless
 * `sensitive`, which folds ASCII letters only (the pattern's letters are ASCII, and a non-ASCII character never
 * folds to an ASCII one without the `u` flag).
 */

/** What path-to-regexp 8's `match` gives: the matched part of the path and the decoded params, or false. */
export type SegmentMatcher = (path: string) => { params: Record<string, any>; path: string } | false;

/** Options as matcher5 gives path-to-regexp's match. */
export interface SegmentOptions {
  sensitive: boolean;
  end: boolean;
  trailing: boolean;
  decode: (value: string) => any;
}

/** A literal segment made of characters path-to-regexp 8 never reads as syntax. */
const LITERAL_SEGMENT = /^[A-Za-z0-9_~.@-]+$/;
/** A named parameter with a plain identifier name. */
const PARAM_SEGMENT = /^:[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The matcher of `pattern`, or undefined when the pattern is not only literal and `:name` segments. */
export function segmentMatcher(pattern: string, options: SegmentOptions): SegmentMatcher | undefined {
  if (pattern.length < 2 || pattern[0] !== '/') return undefined;
  const parts = pattern.slice(1).split('/');
  // a literal is stored lower-cased when matching ignores case; a param by its name, with `null` in `literals`
  const literals: Array<string | null> = [];
  const names: string[] = [];
  for (const part of parts) {
    if (LITERAL_SEGMENT.test(part)) literals.push(options.sensitive ? part : part.toLowerCase());
    else if (PARAM_SEGMENT.test(part) && !names.includes(part.slice(1))) {
      literals.push(null);
      names.push(part.slice(1));
    } else return undefined;
  }
  const { sensitive, end, trailing, decode } = options;
  const count = literals.length;

  return function matchSegments(path) {
    const len = path.length;
    let pos = 0;
    // the raw values, decoded only once the whole path matched (as the regexp's captures are): the first in a
    // variable (most patterns have one), any others in an array
    let first: string | undefined;
    let others: string[] | undefined;
    for (let t = 0; t < count; t++) {
      if (path.charCodeAt(pos) !== 0x2f /* / */) return false;
      pos++;
      const literal = literals[t]!;
      if (literal === null) {
        let stop = path.indexOf('/', pos);
        if (stop === -1) stop = len;
        if (stop === pos) return false;
        const value = path.slice(pos, stop);
        if (first === undefined) first = value;
        else (others ??= []).push(value);
        pos = stop;
        continue;
      }
      const n = literal.length;
      if (pos + n > len) return false;
      for (let i = 0; i < n; i++) {
        const want = literal.charCodeAt(i);
        let got = path.charCodeAt(pos + i);
        // ASCII A-Z folded to a-z (the literal is lower-cased already)
        if (!sensitive && got >= 0x41 && got <= 0x5a) got |= 0x20;
        if (got !== want) return false;
      }
      pos += n;
    }
    // the optional final '/', then the end of the path, or (a prefix) the start of another segment
    if (trailing && pos === len - 1 && path.charCodeAt(pos) === 0x2f) pos = len;
    if (pos !== len && (end || path.charCodeAt(pos) !== 0x2f)) return false;
    const params: Record<string, any> = Object.create(null);
    if (first !== undefined) {
      params[names[0]!] = decode(first);
      for (let k = 1; k < names.length; k++) params[names[k]!] = decode(others![k - 1]!);
    }
    return { params, path: pos === len ? path : path.slice(0, pos) };
  };
}

/**
 * Accept-Encoding negotiation (RFC 9110 §12.5.3) between the codings a server offers.
 *
 * Rules applied:
 * - each member is `coding [; q=weight]`; codings are case-insensitive; `x-gzip` means `gzip`
 *   (RFC 9110 §8.4.1.3);
 * - a coding not listed takes the weight of `*` when `*` is present, and is not acceptable otherwise;
 * - weight 0 means "not acceptable"; the highest weight wins, ties go to the server's order;
 * - a malformed weight makes that member unusable (it is ignored rather than guessed at);
 * - no header at all means the client did not ask for a coding: we send identity. RFC 9110 allows any
 *   coding then, but old clients and proxies that omit the header do not always decode.
 */

/** The content codings keel compresses with, in the server's order of preference. */
export type Coding = 'br' | 'gzip';

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Parse the header into coding → weight; later duplicates do not override earlier ones. */
export function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const member of header.split(',')) {
    const [rawCoding, ...params] = member.split(';');
    let coding = rawCoding!.trim().toLowerCase();
    if (!coding) continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let q = 1;
    let valid = true;
    for (const param of params) {
      const eq = param.indexOf('=');
      const name = param.slice(0, eq).trim().toLowerCase();
      if (name !== 'q') continue;
      const value = param.slice(eq + 1).trim();
      if (eq < 0 || !QVALUE.test(value)) valid = false;
      else q = Number(value);
    }
    if (valid && !weights.has(coding)) weights.set(coding, q);
  }
  return weights;
}

/**
 * The coding to use for this request among `offered` (in preference order), or null for identity.
 */
export function negotiateEncoding(header: string | string[] | undefined, offered: readonly Coding[]): Coding | null {
  if (header === undefined) return null;
  const weights = parseAcceptEncoding(Array.isArray(header) ? header.join(',') : header);
  const wildcard = weights.get('*');
  let best: Coding | null = null;
  let bestQ = 0;
  for (const coding of offered) {
    const q = weights.get(coding) ?? wildcard ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}

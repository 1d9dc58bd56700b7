/**
 * Reading Prometheus exposition text (`name{label="v",…} value` lines) in tests, so each metrics test asserts
 * on samples rather than on string shapes.
 */

/** Every sample of `name` in the exposition text, as [labels, value]. */
export function samples(text: string, name: string): [Record<string, string>, number][] {
  const out: [Record<string, string>, number][] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    out.push([Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!])), Number(m[3])]);
  }
  return out;
}

const matches = (have: Record<string, string>, labels: Record<string, string>): boolean => Object.entries(labels).every(([k, v]) => have[k] === v);

/** The value of the first sample of `name` carrying `labels`, or undefined when there is none. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(text, name).find(([have]) => matches(have, labels))?.[1];
}

/** The sum of the samples of `name` carrying `labels` (0 when there is none). */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text, name).filter(([have]) => matches(have, labels)).reduce((n, [, v]) => n + v, 0);
}

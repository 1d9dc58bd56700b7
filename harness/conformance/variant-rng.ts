/**
 * The seeded random source of generated variants (variants.ts): mulberry32, a small well-known 32-bit
 * generator, seeded per base case from the run's seed and the case id, so a case's variants are the
 * same whatever else is selected (`--filter`) and reproducible from the seed the summary prints.
 * (Ten lines: no library for it.)
 */
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string, to mix a case id into the seed. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The generator for one base case. */
export function rngFor(seed: number, id: string): Rng {
  return mulberry32((seed ^ hash32(id)) >>> 0);
}

/** `n` random lower-case letters. */
export function word(rng: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(97 + Math.floor(rng() * 26));
  return s;
}

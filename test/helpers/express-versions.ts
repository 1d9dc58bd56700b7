/**
 * Express 4 and Express 5, for tests that must hold under both (legacy apps adopt keel factories on
 * either). `express4` is a dev-dependency alias (`npm:express@^4`); `express` is Express 5.
 *
 * @example
 * for (const { name, express } of EXPRESS_VERSIONS) {
 *   describe(`under ${name}`, () => { … express().use(factory()) … });
 * }
 */
import express5 from 'express';
// Typed by the dev alias @types/express4 (npm:@types/express@^4); tests use the API both versions share.
import express4Typed from 'express4';

export type ExpressFactory = typeof express5;

export interface ExpressVersion {
  /** 'express@4' or 'express@5' */
  readonly name: string;
  readonly major: 4 | 5;
  readonly express: ExpressFactory;
}

export const EXPRESS_VERSIONS: readonly ExpressVersion[] = [
  { name: 'express@4', major: 4, express: express4Typed as unknown as ExpressFactory },
  { name: 'express@5', major: 5, express: express5 },
];

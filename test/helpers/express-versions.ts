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
// @ts-expect-error -- the alias has no types of its own; Express 4's API is a subset of the typed one we use.
import express4Untyped from 'express4';

export type ExpressFactory = typeof express5;

export interface ExpressVersion {
  /** 'express@4' or 'express@5' */
  readonly name: string;
  readonly major: 4 | 5;
  readonly express: ExpressFactory;
}

export const EXPRESS_VERSIONS: readonly ExpressVersion[] = [
  { name: 'express@4', major: 4, express: express4Untyped as ExpressFactory },
  { name: 'express@5', major: 5, express: express5 },
];

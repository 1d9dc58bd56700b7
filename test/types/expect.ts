/**
 * Compile-time assertions for the type tests in this folder. These files are not run: `npm test`
 * type-checks them (`npm run typecheck`), so a wrong inferred type or an `@ts-expect-error` line
 * that no longer errors fails the suite.
 */

/** Exact type equality (not mere assignability): `any`, optional and readonly differences count. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;

/** `expectType<Equal<A, B>>(true)`: fails to compile unless the types are equal. */
export function expectType<T extends true>(_ok: T): void {}

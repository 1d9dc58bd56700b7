/**
 * Optional peer dependencies: whether they are installed, and the AppError that says how to install
 * them (docs/protocols.md). Resolved from keel's own location, where a user's `npm install` puts them.
 */
import { AppError } from './errors.js';

/** Packages a GraphQL route with `enable_playground` needs on top of the GraphQL ones (lib/builtins.ts). */
export const PLAYGROUND_PACKAGES: readonly string[] = ['graphiql@3', 'react@18', 'react-dom@18'];

/** `graphql@16` → `graphql`, `@grpc/proto-loader@0.8` → `@grpc/proto-loader`. */
export function packageName(spec: string): string {
  const at = spec.lastIndexOf('@');
  return at > 0 ? spec.slice(0, at) : spec;
}

/** The packages of `specs` (`name@version`) that cannot be resolved from keel's location. */
export function missingPackages(specs: readonly string[]): string[] {
  return specs.filter((spec) => {
    try {
      import.meta.resolve(packageName(spec));
      return false;
    } catch (err) {
      // A package without a "." export (ERR_PACKAGE_PATH_NOT_EXPORTED) is installed all the same.
      return (err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
    }
  });
}

/** AppError('Server') naming the command that installs what `feature` lacks. */
export function missingPackagesError(feature: string, missing: readonly string[]): AppError {
  return new AppError('Server', `${feature} needs packages that are not installed (optional peer dependencies of keel): run \`npm install ${missing.join(' ')}\``);
}

/**
 * Optional peer dependencies: whether they are installed, and the AppError that says how to install
 * them (docs/protocols.md). Resolved from keel's own location, where a user's `npm install` puts them.
 */
import { createRequire } from 'node:module';
import { AppError } from '../http/errors.js';

const require = createRequire(import.meta.url);

/** Packages a GraphQL route with `enable_playground` needs on top of the GraphQL ones (lib/app/builtins.ts). */
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

/**
 * The packages of `specs` (`name@major`) that are installed at another major version. The GraphiQL
 * playground serves React 18's UMD builds, which React 19 no longer ships, while Redoc and Swagger
 * UI bundle their own React: an app may well have react 19 for other reasons.
 */
export function wrongMajorPackages(specs: readonly string[]): Array<{ spec: string; installed: string }> {
  const out: Array<{ spec: string; installed: string }> = [];
  for (const spec of specs) {
    const want = /@(\d+)$/.exec(spec)?.[1];
    if (!want) continue;
    let installed: string;
    try {
      installed = (require(`${packageName(spec)}/package.json`) as { version: string }).version;
    } catch {
      continue; // not installed (missingPackages names it) or no package.json export: nothing to compare
    }
    if (installed.split('.')[0] !== want) out.push({ spec, installed });
  }
  return out;
}

/** AppError('Server') naming the command that installs what `feature` lacks. */
export function missingPackagesError(feature: string, missing: readonly string[]): AppError {
  return new AppError('Server', `${feature} needs packages that are not installed (optional peer dependencies of keel): run \`npm install ${missing.join(' ')}\``);
}

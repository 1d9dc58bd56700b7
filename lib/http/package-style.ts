/**
 * The factories that replace a package (cors, express-rate-limit, express-jwt, compression) take either
 * keel's record or that package's options, one style per call (docs/migrating-from-express.md).
 */

/**
 * Whether `options` are written in the package's style: true when a defined key is the package's,
 * false when none is. A defined keel record key beside the package's is `mixed(packageKeys, keelKey)`,
 * which throws the factory's ConfigError.
 */
export function isPackageStyle(
  options: object,
  isPackageKey: (key: string, value: unknown) => boolean,
  isRecordKey: (key: string, value: unknown) => boolean,
  mixed: (packageKeys: readonly string[], keelKey: string) => never,
): boolean {
  const o = options as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined);
  const pkg = keys.filter((k) => isPackageKey(k, o[k]));
  if (pkg.length === 0) return false;
  const keel = keys.find((k) => isRecordKey(k, o[k]));
  if (keel !== undefined) mixed(pkg, keel);
  return true;
}

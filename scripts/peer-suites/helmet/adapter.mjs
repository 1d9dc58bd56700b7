// What helmet's suite imports as `..`: helmet(options) as the default export, the standalone middlewares
// as named exports and as its properties, from keel's built security-headers. Each of helmet's
// middlewares/<name>/index.ts is middlewares/<name>.mjs here (that middleware as the default export).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const keel = await import(pathToFileURL(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'security-headers', 'index.js')).href);

export const {
  contentSecurityPolicy, crossOriginEmbedderPolicy, crossOriginOpenerPolicy, crossOriginResourcePolicy, originAgentCluster,
  referrerPolicy, strictTransportSecurity, hsts, xContentTypeOptions, noSniff, xDnsPrefetchControl, dnsPrefetchControl,
  xDownloadOptions, ieNoOpen, xFrameOptions, frameguard, xPermittedCrossDomainPolicies, permittedCrossDomainPolicies,
  xPoweredBy, hidePoweredBy, xXssProtection, xssFilter,
} = keel;
export const { getDefaultDirectives, dangerouslyDisableDefaultSrc } = keel.contentSecurityPolicy;
export default keel.default;

// What helmet's suite imports: `helmet(options)` with the standalone middlewares as properties and
// named exports, and each middlewares/<name> module's default export (this module, loaded with
// ?middleware=<name>). keel's standalone helmet middlewares are used when security-headers exports
// them; until then each is emulated through securityHeaders({ helmet: { <that header only> } }).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const keel = await import(pathToFileURL(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'security-headers', 'index.js')).href);

// helmet's top-level option for each middlewares/<folder>, and its exported names (with legacy aliases).
const FOLDERS = {
  'content-security-policy': ['contentSecurityPolicy'],
  'cross-origin-embedder-policy': ['crossOriginEmbedderPolicy'],
  'cross-origin-opener-policy': ['crossOriginOpenerPolicy'],
  'cross-origin-resource-policy': ['crossOriginResourcePolicy'],
  'origin-agent-cluster': ['originAgentCluster'],
  'referrer-policy': ['referrerPolicy'],
  'strict-transport-security': ['strictTransportSecurity', 'hsts'],
  'x-content-type-options': ['xContentTypeOptions', 'noSniff'],
  'x-dns-prefetch-control': ['xDnsPrefetchControl', 'dnsPrefetchControl'],
  'x-download-options': ['xDownloadOptions', 'ieNoOpen'],
  'x-frame-options': ['xFrameOptions', 'frameguard'],
  'x-permitted-cross-domain-policies': ['xPermittedCrossDomainPolicies', 'permittedCrossDomainPolicies'],
  'x-powered-by': ['xPoweredBy', 'hidePoweredBy'],
  'x-xss-protection': ['xXssProtection', 'xssFilter'],
};
const ALL = Object.values(FOLDERS).map((names) => names[0]);

function standalone(option) {
  if (typeof keel[option] === 'function') return keel[option];
  return function emulated(options = {}) {
    const only = Object.fromEntries(ALL.map((o) => [o, o === option ? options : false]));
    return keel.securityHeaders({ helmet: only });
  };
}

export function helmet(options = {}) {
  return keel.helmet ? keel.helmet(options) : keel.securityHeaders({ helmet: options });
}
const named = {};
for (const names of Object.values(FOLDERS)) for (const n of names) named[n] = standalone(names[0]);
Object.assign(helmet, named);
export const {
  contentSecurityPolicy, crossOriginEmbedderPolicy, crossOriginOpenerPolicy, crossOriginResourcePolicy, originAgentCluster,
  referrerPolicy, strictTransportSecurity, hsts, xContentTypeOptions, noSniff, xDnsPrefetchControl, dnsPrefetchControl,
  xDownloadOptions, ieNoOpen, xFrameOptions, frameguard, xPermittedCrossDomainPolicies, permittedCrossDomainPolicies,
  xPoweredBy, hidePoweredBy, xXssProtection, xssFilter,
} = named;
// content-security-policy's own named exports.
export const getDefaultDirectives = keel.getDefaultDirectives ?? (() => ({}));
export const dangerouslyDisableDefaultSrc = keel.dangerouslyDisableDefaultSrc ?? Symbol('dangerouslyDisableDefaultSrc');

const folder = new URL(import.meta.url).searchParams.get('middleware');
export default folder ? named[FOLDERS[folder][0]] : helmet;

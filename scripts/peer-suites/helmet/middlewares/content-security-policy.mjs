// helmet's middlewares/content-security-policy: keel's contentSecurityPolicy.
export { contentSecurityPolicy as default } from '../adapter.mjs';
export { getDefaultDirectives, dangerouslyDisableDefaultSrc } from '../adapter.mjs';

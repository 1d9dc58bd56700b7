// helmet's middlewares/x-xss-protection: keel's xXssProtection.
export { xXssProtection as default } from '../adapter.mjs';

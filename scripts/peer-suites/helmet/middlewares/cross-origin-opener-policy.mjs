// helmet's middlewares/cross-origin-opener-policy: keel's crossOriginOpenerPolicy.
export { crossOriginOpenerPolicy as default } from '../adapter.mjs';

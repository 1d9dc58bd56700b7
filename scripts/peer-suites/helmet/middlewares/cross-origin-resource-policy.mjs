// helmet's middlewares/cross-origin-resource-policy: keel's crossOriginResourcePolicy.
export { crossOriginResourcePolicy as default } from '../adapter.mjs';

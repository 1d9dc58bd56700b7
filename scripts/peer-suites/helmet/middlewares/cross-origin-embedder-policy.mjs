// helmet's middlewares/cross-origin-embedder-policy: keel's crossOriginEmbedderPolicy.
export { crossOriginEmbedderPolicy as default } from '../adapter.mjs';

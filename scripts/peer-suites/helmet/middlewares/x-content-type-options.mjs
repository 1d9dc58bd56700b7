// helmet's middlewares/x-content-type-options: keel's xContentTypeOptions.
export { xContentTypeOptions as default } from '../adapter.mjs';

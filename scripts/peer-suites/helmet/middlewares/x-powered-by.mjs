// helmet's middlewares/x-powered-by: keel's xPoweredBy.
export { xPoweredBy as default } from '../adapter.mjs';

// helmet's middlewares/x-frame-options: keel's xFrameOptions.
export { xFrameOptions as default } from '../adapter.mjs';

// helmet's middlewares/x-download-options: keel's xDownloadOptions.
export { xDownloadOptions as default } from '../adapter.mjs';

// helmet's middlewares/x-dns-prefetch-control: keel's xDnsPrefetchControl.
export { xDnsPrefetchControl as default } from '../adapter.mjs';

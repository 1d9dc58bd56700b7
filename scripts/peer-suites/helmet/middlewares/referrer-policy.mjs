// helmet's middlewares/referrer-policy: keel's referrerPolicy.
export { referrerPolicy as default } from '../adapter.mjs';

// helmet's middlewares/strict-transport-security: keel's strictTransportSecurity.
export { strictTransportSecurity as default } from '../adapter.mjs';

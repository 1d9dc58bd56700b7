// helmet's middlewares/x-permitted-cross-domain-policies: keel's xPermittedCrossDomainPolicies.
export { xPermittedCrossDomainPolicies as default } from '../adapter.mjs';

// helmet's middlewares/origin-agent-cluster: keel's originAgentCluster.
export { originAgentCluster as default } from '../adapter.mjs';

/**
 * JSON-RPC as an App protocol (lib/app/plugin.ts): the methods given to `app.rpc()` and routes with
 * `jsonrpc` metadata, served at JsonRpcConfig.endpoint_path. Loaded by `app.ready()` (lib/app/builtins.ts).
 */
import type { ProtocolPlugin } from '../app/plugin.js';
import { installJsonRpc, registerRpc } from './index.js';
import type { JsonRpcMethodInfoInput, RpcHandler } from './registry.js';

export const protocol: ProtocolPlugin = {
  name: 'jsonrpc',
  install(host, registrations) {
    // A bad name or a duplicate is a ConfigError here, when the router is built.
    for (const { args } of registrations) registerRpc(host, args[0] as JsonRpcMethodInfoInput | string, args[1] as RpcHandler);
    installJsonRpc(host);
  },
};

/**
 * JSON-RPC for the App (lib/builtins.ts): what `app.rpc()` and the installer call. Registered when
 * this module is evaluated, so the App uses this very copy of it (and its method registries).
 */
import { provideProtocol } from '../builtins.js';
import { installJsonRpc, registerRpc } from './index.js';

// Function declarations of ./index.js: initialised before either module runs, whichever is loaded first.
export const jsonRpcProtocol = { registerRpc, installJsonRpc };
provideProtocol('jsonrpc', jsonRpcProtocol);

/**
 * Built-in protocol installers, run by the App when it is built (see docs/architecture.md).
 * Each protocol module adds one entry; an installer reads `app.config` and installs nothing
 * when its feature is off, so a disabled feature costs nothing per request.
 */
import type { App } from './app.js';
import { installBackground } from './background/install.js';
import { installOpenApi } from './openapi/index.js';
import { installAsyncApi } from './asyncapi/index.js';
import { installJsonRpc } from './jsonrpc/index.js';
import { installGrpc } from './grpc/install.js';

export type Installer = (app: App) => void | Promise<void>;

export const BUILTIN_INSTALLERS: Installer[] = [installBackground, installOpenApi, installAsyncApi, installJsonRpc, installGrpc];

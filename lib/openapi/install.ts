/**
 * OpenAPI as an App protocol (lib/app/plugin.ts): serves the document and docs pages when
 * ServerConfig.openapi is on. Loaded by `app.ready()` (lib/app/builtins.ts).
 */
import type { ProtocolPlugin } from '../app/plugin.js';
import { installOpenApi } from './index.js';

export const protocol: ProtocolPlugin = {
  name: 'openapi',
  install: (host) => installOpenApi(host),
};

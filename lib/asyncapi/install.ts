/**
 * AsyncAPI as an App protocol (lib/app/plugin.ts): serves the document, parse and validate endpoints when
 * ServerConfig.asyncapi is on. Loaded by `app.ready()` (lib/app/builtins.ts).
 */
import type { ProtocolPlugin } from '../app/plugin.js';
import { installAsyncApi } from './index.js';

export const protocol: ProtocolPlugin = {
  name: 'asyncapi',
  install: (host) => installAsyncApi(host),
};

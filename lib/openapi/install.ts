/**
 * OpenAPI for the App (lib/builtins.ts): the installer that serves the document and docs pages when
 * ServerConfig.openapi is on. Registered when this module is evaluated.
 */
import { provideProtocol } from '../builtins.js';
import { installOpenApi } from './index.js';

// A function declaration of ./index.js: initialised before either module runs, whichever is loaded first.
export const openApiProtocol = { installOpenApi };
provideProtocol('openapi', openApiProtocol);

/**
 * AsyncAPI for the App (lib/builtins.ts): the installer that serves the document, parse and validate
 * endpoints when ServerConfig.asyncapi is on. Registered when this module is evaluated.
 */
import { provideProtocol } from '../builtins.js';
import { installAsyncApi } from './index.js';

// A function declaration of ./index.js: initialised before either module runs, whichever is loaded first.
export const asyncApiProtocol = { installAsyncApi };
provideProtocol('asyncapi', asyncApiProtocol);

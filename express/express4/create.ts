/**
 * `express()` and the `express` namespace of Express 4: Express 5's (create.ts) made of Express 4's parts, with
 * `express.query` and the getters that point Express 3 users to the middleware it no longer bundles. Ported from
 * Express's lib/express.js 4.x (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas
 * Christopher Wilson; MIT).
 */
import { createExpress, type EngineLibraries } from '../create.js';
import { Layer4 } from './layer.js';
import { createRouterClass4, Route4 } from './router.js';
import { createApplicationPrototype4, query4 } from './application.js';
import { createRequestPrototype4 } from './request.js';
import { createResponsePrototype4 } from './response.js';

/** Connect middleware Express 3 bundled: Express 4 throws a pointer to the separate packages when one is read. */
const REMOVED_MIDDLEWARE = ['bodyParser', 'compress', 'cookieSession', 'session', 'logger', 'cookieParser', 'favicon',
  'responseTime', 'errorHandler', 'timeout', 'methodOverride', 'vhost', 'csrf', 'directory', 'limit', 'multipart',
  'staticCache'];

/**
 * The `express` function of Express 4.
 *
 * @example
 * const express = createExpress4({ bodyParser, serveStatic });
 */
export function createExpress4(libraries: EngineLibraries): any {
  const Router = createRouterClass4();
  const express = createExpress(libraries, {
    Router,
    Layer: Layer4,
    Route: Route4,
    application: createApplicationPrototype4(Router),
    request: createRequestPrototype4(),
    response: createResponsePrototype4(),
  });
  express.query = query4;
  for (const name of REMOVED_MIDDLEWARE) {
    Object.defineProperty(express, name, {
      configurable: true,
      get() {
        throw new Error('Most middleware (like ' + name + ') is no longer bundled with Express and must be installed separately. Please see https://github.com/senchalabs/connect#middleware.');
      },
    });
  }
  return express;
}

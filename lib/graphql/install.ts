/**
 * GraphQL for the App (lib/builtins.ts): what `app.registerGraphqlRoute()` / `registerGraphqlSdlRoute()`
 * call. Registered when this module is evaluated, so the App uses this very copy of it.
 */
import { provideProtocol } from '../builtins.js';
import { graphqlRoute, graphqlSdlRoute, installGraphqlRoute, routeOptions } from './route.js';
// Subscriptions are WebSocket upgrades behind the App's server guard, which keel/ws builds.
import '../ws/install.js';

export const graphqlProtocol = { graphqlRoute, graphqlSdlRoute, installGraphqlRoute, routeOptions };
provideProtocol('graphql', graphqlProtocol);

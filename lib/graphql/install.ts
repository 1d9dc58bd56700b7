/**
 * GraphQL as an App protocol (lib/plugin.ts): the routes of `app.registerGraphqlRoute()` /
 * `registerGraphqlSdlRoute()`, with subscriptions behind the App's server guard (keel/ws). Loaded by
 * `app.ready()` (lib/builtins.ts).
 */
import { missingPackages, missingPackagesError, PLAYGROUND_PACKAGES } from '../packages.js';
import type { ProtocolPlugin } from '../plugin.js';
import { jsonPoisoningOf } from '../json-parse.js';
import { serverGuardOf } from '../ws/install.js';
import { graphqlRoute, graphqlSdlRoute, installGraphqlRoute, routeOptions, type GraphqlRoute } from './route.js';

type RouteArgs = Parameters<typeof routeOptions>[0];

export const protocol: ProtocolPlugin = {
  name: 'graphql',
  install(host, registrations) {
    for (const { method, args } of registrations) {
      const a = args as [string, string, ...unknown[]];
      let route: GraphqlRoute;
      const jsonPoisoning = jsonPoisoningOf(host.config);
      const own = routeOptions((method === 'registerGraphqlRoute' ? a[4] : a[5]) as RouteArgs);
      // The App's pub/sub (AppOptions.pubsub: memory, or Redis across instances) unless the route brings its own;
      // topics scoped by path, so two routes of one App keep their events apart.
      const events = own.pubsub ? {} : { pubsub: host.pubsub, topicPrefix: own.topicPrefix ?? `graphql:${a[0]}:` };
      const options = { ...own, ...events, guards: [serverGuardOf(host)], jsonPoisoning };
      if (method === 'registerGraphqlRoute') {
        route = graphqlRoute(a[0], a[1], a[2] as string, a[3], options);
      } else {
        route = graphqlSdlRoute(a[0], a[1], a[2] as string, a[3], a[4], options);
      }
      if (route.playground) {
        const missing = missingPackages(PLAYGROUND_PACKAGES);
        if (missing.length) throw missingPackagesError(`The GraphiQL playground of ${route.path} (enable_playground)`, missing);
      }
      installGraphqlRoute(host, route);
    }
  },
};

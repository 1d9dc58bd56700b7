/**
 * GraphQL as an App protocol (lib/app/plugin.ts): the routes of `app.registerGraphqlRoute()` /
 * `registerGraphqlSdlRoute()`, with subscriptions behind the App's server guard (keel/ws). Loaded by
 * `app.ready()` (lib/app/builtins.ts).
 */
import { clientBudgetOf } from '../server/client-budget.js';
import { missingPackages, missingPackagesError, packageName, PLAYGROUND_PACKAGES, wrongMajorPackages } from '../ops/packages.js';
import type { ProtocolPlugin } from '../app/plugin.js';
import { jsonPoisoningOf } from '../http/json-parse.js';
import { AppError } from '../http/errors.js';
import { middlewareGuard, type UpgradeGuard } from '../ws/guard.js';
import { serverGuardOf } from '../ws/install.js';
import { fairnessOfConfig } from '../ws/fairness.js';
import { workGateOf } from '../server/cost.js';
import { graphqlRoute, graphqlSdlRoute, installGraphqlRoute, routeOptions, type GraphqlRoute } from './route.js';

type RouteArgs = Parameters<typeof routeOptions>[0];

function bothGuards(first: UpgradeGuard, second: UpgradeGuard): UpgradeGuard {
  return async function operationGuards(req) {
    await first(req);
    await second(req);
  };
}

export const protocol: ProtocolPlugin = {
  name: 'graphql',
  install(host, registrations) {
    // Each WebSocket operation draws from the server-level rate limit, as each HTTP request does.
    const limiter = host.serverRateLimit();
    const operationGuard = limiter ? middlewareGuard([limiter]) : undefined;
    // Operations are paid for by their measured time (ServerConfig.work_limits; issue 35 item 2).
    const workGate = registrations.length > 0 ? workGateOf(host) : undefined;
    for (const { method, args } of registrations) {
      const a = args as [string, string, ...unknown[]];
      let route: GraphqlRoute;
      const jsonPoisoning = jsonPoisoningOf(host.config);
      const own = routeOptions((method === 'registerGraphqlRoute' ? a[4] : a[5]) as RouteArgs);
      // The App's pub/sub (AppOptions.pubsub: memory, or Redis across instances) unless the route brings its own;
      // topics scoped by path, so two routes of one App keep their events apart.
      const events = own.pubsub ? {} : { pubsub: host.pubsub, topicPrefix: own.topicPrefix ?? `graphql:${a[0]}:` };
      // The route's own operation guard (if any) runs after the server's rate limit.
      const guard = operationGuard && own.operationGuard ? bothGuards(operationGuard, own.operationGuard) : operationGuard ?? own.operationGuard;
      // The App's ws_* settings, under the route's own fairness options.
      const fairness = { ...fairnessOfConfig(host.config), ...own.fairness };
      const options = { ...own, ...events, guards: [serverGuardOf(host)], jsonPoisoning, operationGuard: guard, logger: host.logger, fairness, clientBudget: clientBudgetOf(host), workGate: own.workGate ?? workGate };
      if (method === 'registerGraphqlRoute') {
        route = graphqlRoute(a[0], a[1], a[2] as string, a[3], options);
      } else {
        route = graphqlSdlRoute(a[0], a[1], a[2] as string, a[3], a[4], options);
      }
      if (route.playground) {
        const missing = missingPackages(PLAYGROUND_PACKAGES);
        if (missing.length) throw missingPackagesError(`The GraphiQL playground of ${route.path} (enable_playground)`, missing);
        const wrong = wrongMajorPackages(PLAYGROUND_PACKAGES);
        if (wrong.length) {
          throw new AppError('Server', `The GraphiQL playground of ${route.path} (enable_playground) needs ${wrong.map((w) => `${w.spec} (${packageName(w.spec)} ${w.installed} is installed)`).join(', ')}: GraphiQL 3 runs on React 18's UMD builds: run \`npm install ${wrong.map((w) => w.spec).join(' ')}\``);
        }
      }
      installGraphqlRoute(host, route);
    }
  },
};

/** A keel WebSocketRouter attached to a fresh node:http server on loopback, for the keel/ws tests. */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSocketRouter } from '../../lib/ws/upgrade.js';

export interface ServedRouter {
  server: Server;
  /** `ws://127.0.0.1:<port>` */
  base: string;
  /** Close the router's connections, then the server. */
  close(): Promise<void>;
}

/** Serve `router`'s upgrades (and plain requests with `onRequest`) on a free loopback port. */
export async function serveRouter(router: WebSocketRouter, onRequest?: RequestListener): Promise<ServedRouter> {
  const server = (onRequest ? createServer(onRequest) : createServer()).listen(0, '127.0.0.1');
  router.attach(server);
  await new Promise((r) => server.once('listening', r));
  return {
    server,
    base: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await router.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * The part of the App the protocol installers (OpenAPI, AsyncAPI, JSON-RPC) rely on, written
 * structurally so the protocol modules do not import the App (which imports them for `app.rpc`).
 * See docs/architecture.md, "App extension points".
 */
import type { ServerResponse } from 'node:http';
import type { MountOptions } from '../app/plugin.js';
import type { ServerConfig } from '../records/server.js';
import type { KeelRequest } from '../http/request.js';

/** A node-level handler behind the server-level middleware. */
export type RawHandler = (req: KeelRequest, res: ServerResponse) => void | Promise<void>;

/** One endpoint a protocol module offers: what `app.mount` receives. */
export interface MountSpec {
  method: 'GET' | 'POST';
  path: string;
  handler: RawHandler;
  /** Read the body (under max_body_size) into `req.rawBody` before the handler runs. */
  readBody: boolean;
  /** Skip server-level authentication (documentation pages a browser opens without credentials). */
  public?: boolean;
  /** The endpoint's operations for the OpenAPI document (MountOptions.openapi). */
  openapi?: MountOptions['openapi'];
  /** Middleware after the server-level features, before the body is read (MountOptions.middleware). */
  middleware?: MountOptions['middleware'];
  /** A page a person opens, listed by `listen()`'s start-up line (MountOptions.page). */
  page?: string;
}

export interface ProtocolHost {
  readonly config: Readonly<ServerConfig>;
  mount(method: string, path: string, handler: RawHandler, options?: Pick<MountOptions, 'readBody' | 'public' | 'openapi' | 'page' | 'middleware'>): unknown;
}

/** Mount every spec on the host. */
export function mountAll(host: ProtocolHost, specs: readonly MountSpec[]): void {
  for (const s of specs) {
    const options: Pick<MountOptions, 'readBody' | 'public' | 'openapi' | 'page' | 'middleware'> = { readBody: s.readBody };
    if (s.public) options.public = true;
    if (s.middleware) options.middleware = s.middleware;
    if (s.openapi) options.openapi = s.openapi;
    if (s.page) options.page = s.page;
    host.mount(s.method, s.path, s.handler, options);
  }
}

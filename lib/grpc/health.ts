/**
 * The standard health service `grpc.health.v1.Health` (https://github.com/grpc/grpc/blob/master/doc/health-checking.md):
 * `Check` answers the serving status of a service ("" = the whole server), `Watch` streams it and every change.
 * Kubernetes' gRPC probes and grpc_health_probe call it without knowing the application's .proto.
 */
import * as protoLoader from '@grpc/proto-loader';
import { GrpcError, GrpcStatus } from './status.js';
import type { GrpcCallContext, GrpcServiceRegistry as GrpcRouter } from './types.js';

export const HEALTH_SERVICE = 'grpc.health.v1.Health';

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

// health.proto in protobufjs JSON form (a TS constant, so it ships in dist/ without copying .proto files).
const HEALTH_PROTO = {
  nested: { grpc: { nested: { health: { nested: { v1: { nested: {
    HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
    HealthCheckResponse: {
      fields: { status: { type: 'ServingStatus', id: 1 } },
      nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
    },
    Health: {
      methods: {
        Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse' },
        Watch: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse', responseStream: true },
      },
    },
  } } } } } } },
};

/** Serving status per service; the App sets NOT_SERVING on shutdown so load balancers drain first. */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>([['', 'SERVING']]);
  private readonly watchers = new Set<(service: string) => void>();
  /** Set by shutdown(): Watch streams end (UNAVAILABLE) after telling NOT_SERVING, so they do not hold the drain. */
  closing = false;

  /** Set the status of `service` ("" = the server as a whole) and notify watchers. */
  set(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const w of this.watchers) w(service);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Every service (and the server) NOT_SERVING: called when graceful shutdown starts. */
  shutdown(): void {
    this.closing = true;
    for (const service of [...this.statuses.keys()]) this.set(service, 'NOT_SERVING');
  }

  /** @internal */
  watch(fn: (service: string) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }
}

async function* watch(registry: HealthRegistry, service: string, call: GrpcCallContext): AsyncGenerator<{ status: ServingStatus }> {
  let wake: (() => void) | undefined;
  let changed = true;
  const stop = registry.watch((s) => {
    if (s === service) {
      changed = true;
      wake?.();
    }
  });
  const onAbort = () => wake?.();
  call.signal.addEventListener('abort', onAbort);
  try {
    let last: ServingStatus | undefined;
    while (!call.signal.aborted) {
      if (changed) {
        changed = false;
        const status = registry.get(service) ?? 'SERVICE_UNKNOWN';
        // Only changes are sent (health-checking.md: "Watch ... whenever the serving status changes").
        if (status !== last) {
          last = status;
          yield { status };
        }
        if (registry.closing) throw new GrpcError(GrpcStatus.UNAVAILABLE, 'Server is shutting down');
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stop();
    call.signal.removeEventListener('abort', onAbort);
  }
}

/** Register the health service on `router`; returns its status registry. */
export function installHealth(router: GrpcRouter): HealthRegistry {
  const registry = new HealthRegistry();
  const pkg = protoLoader.fromJSON(HEALTH_PROTO as never, { keepCase: true, enums: String, defaults: true });
  router.addService(pkg, HEALTH_SERVICE, {
    Check: ({ service }: { service: string }) => {
      const status = registry.get(service);
      if (!status) throw new GrpcError(GrpcStatus.NOT_FOUND, 'unknown service');
      return { status };
    },
    Watch: ({ service }: { service: string }, call: GrpcCallContext) => watch(registry, service, call),
  });
  return registry;
}

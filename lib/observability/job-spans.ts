/**
 * Background jobs and pub/sub events in the request's trace (OpenTelemetry messaging semantic conventions): a
 * PRODUCER span where the job is enqueued (`send <job>`), child of the active span (the request's),
 * and a CONSUMER span where it runs (`process <job>`), whose parent is the PRODUCER span. The link
 * crosses in the job's data: the PRODUCER span's context is injected into a carrier with the
 * propagation API (the SDK's propagator: W3C `traceparent` with NodeSDK) and stored with the job
 * (BullMQ: `job.data.trace`), and extracted where the job runs, on whichever instance takes it. So one
 * trace covers the request, the enqueue and the job. Events likewise: `publish <topic>` where they are
 * published, and, with RedisPubSub, `process <topic>` where another instance receives one (the context
 * rides in the message's tag, lib/pubsub/redis.ts).
 *
 * Made by the App when `ServerConfig.opentelemetry` is on (lib/background/install.ts) and handed to
 * its executor; without it the executors hold `undefined` and pay one branch per job.
 */
import type { OpenTelemetryConfig } from '../records/observability.js';
import { spanKit, type KitSpan, type SpanKit } from './spans.js';

/** What a job's spans say about it. */
export interface TracedJob {
  /** The job's name (`app.job(name)`, or the metadata name of a closure). */
  readonly name: string;
  /** `messaging.system`: `keel` (in process) or `bullmq`. */
  readonly system: string;
  /** `messaging.destination.name`: the queue, when there is one. */
  readonly queue?: string;
  /** `messaging.message.id`: the job's id, when known. */
  readonly id?: string;
  /** The run's attempt (CONSUMER spans of a durable queue). */
  readonly attempt?: number;
  /** A pub/sub event (`name` is its topic): `publish <topic>` / `process <topic>`. */
  readonly event?: boolean;
}

/** The trace context a job carries from its enqueue to its run (`traceparent`, `tracestate`). */
export type TraceCarrier = Record<string, string>;

/** A started PRODUCER span. */
export interface JobSend {
  /** Its context, to store with the job; undefined when the SDK's propagator wrote nothing. */
  readonly carrier: TraceCarrier | undefined;
  /** End it: `err` when the job was not accepted. */
  end(err?: unknown): void;
  /** End it when `accepted` settles (its value, a job id, becomes `messaging.message.id`). */
  settle<T>(accepted: Promise<T>): Promise<T>;
}

/** The spans of an executor's jobs (or a pub/sub's events). */
export interface JobTracing {
  /** At enqueue: the PRODUCER span, child of the active span. */
  produce(job: TracedJob): JobSend;
  /** At run: `fn` inside the CONSUMER span (parent: the context in `carrier`), ended when `fn` settles. */
  consume<T>(carrier: unknown, job: TracedJob, fn: () => T): T;
}

/** The App's job tracing: undefined when spans are off. */
export function jobTracing(config: Readonly<OpenTelemetryConfig> | null | undefined): JobTracing | undefined {
  return config?.enabled ? new KitJobTracing(spanKit(config.tracer_name)) : undefined;
}

function attributesOf(job: TracedJob, operation: 'send' | 'process'): Record<string, string | number> {
  const a: Record<string, string | number> = {
    'messaging.system': job.system,
    'messaging.operation.type': operation,
    'messaging.operation.name': job.event && operation === 'send' ? 'publish' : operation,
  };
  if (job.event) a['messaging.destination.name'] = job.name;
  else a['keel.job.name'] = job.name;
  if (job.queue !== undefined) a['messaging.destination.name'] = job.queue;
  if (job.id !== undefined) a['messaging.message.id'] = job.id;
  if (job.attempt !== undefined) a['keel.job.attempt'] = job.attempt;
  return a;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as PromiseLike<unknown> | null)?.then === 'function';

class KitJobTracing implements JobTracing {
  readonly #kit: SpanKit;
  constructor(kit: SpanKit) {
    this.#kit = kit;
  }

  #fail(span: KitSpan, err: unknown): void {
    this.#kit.recordError(span, err, 'job failed');
  }

  produce(job: TracedJob): JobSend {
    const { api, tracer } = this.#kit;
    const parent = api.context.active();
    const span: KitSpan = tracer.startSpan(`${job.event ? 'publish' : 'send'} ${job.name}`, { kind: api.SpanKind.PRODUCER, attributes: attributesOf(job, 'send') }, parent);
    const carrier: TraceCarrier = {};
    api.propagation.inject(api.trace.setSpan(parent, span), carrier);
    const end = (err?: unknown) => {
      if (err !== undefined) this.#fail(span, err);
      span.end();
    };
    return {
      carrier: Object.keys(carrier).length ? carrier : undefined,
      end,
      settle: (accepted) => accepted.then((id) => {
        if (typeof id === 'string') span.setAttribute('messaging.message.id', id);
        end();
        return id;
      }, (err: unknown) => {
        end(err);
        throw err;
      }),
    };
  }

  consume<T>(carrier: unknown, job: TracedJob, fn: () => T): T {
    const { api, tracer } = this.#kit;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, carrier !== null && typeof carrier === 'object' ? carrier : {});
    const span: KitSpan = tracer.startSpan(`process ${job.name}`, { kind: api.SpanKind.CONSUMER, attributes: attributesOf(job, 'process') }, parent);
    let out: T;
    try {
      out = api.context.with(api.trace.setSpan(parent, span), fn);
    } catch (err) {
      this.#fail(span, err);
      span.end();
      throw err;
    }
    if (!isThenable(out)) {
      span.end();
      return out;
    }
    return Promise.resolve(out).then((v) => {
      span.end();
      return v;
    }, (err: unknown) => {
      this.#fail(span, err);
      span.end();
      throw err;
    }) as T;
  }
}

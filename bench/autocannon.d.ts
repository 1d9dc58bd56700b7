// The part of autocannon's programmatic API the runner uses (the package ships no types).
declare module 'autocannon' {
  interface Stat { average: number; mean: number; total: number; p50: number; p99: number; max: number; min: number }
  export interface Result {
    requests: Stat;
    latency: Stat;
    throughput: Stat;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  /** One request of a sequence each connection cycles through. */
  export interface RequestSpec { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: RequestSpec[];
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}

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
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}

/**
 * A throwaway Prometheus server (Debian's `prometheus`, which .ci/run installs) on a free loopback port,
 * scraping the targets it is given every second into a temporary storage directory. Tests skip visibly
 * when it is absent: `{ skip: NO_PROMETHEUS }`. Also used by the dashboard picture script.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../harness/conformance/exec.js';

export const PROMETHEUS = process.env.KEEL_PROMETHEUS ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.KEEL_PROMTOOL ?? '/usr/bin/promtool';
const works = (bin: string) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0;
/** The `skip` option of a test that needs the prometheus binary. */
export const NO_PROMETHEUS: string | false = works(PROMETHEUS) ? false : `skipped: no prometheus at ${PROMETHEUS} (apt-get install prometheus, or set KEEL_PROMETHEUS)`;
/** The `skip` option of a test that needs promtool. */
export const NO_PROMTOOL: string | false = works(PROMTOOL) ? false : `skipped: no promtool at ${PROMTOOL} (apt-get install prometheus, or set KEEL_PROMTOOL)`;

/** How long Prometheus may take to start on a loaded machine. */
const START_TIMEOUT_MS = 30_000;

/** One result series of the HTTP API (`/api/v1/query` vector or `/api/v1/query_range` matrix). */
export interface PromSeries {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

/** What the HTTP API answered: `error` set when the query did not parse or evaluate. */
export interface PromAnswer {
  status: 'success' | 'error';
  error?: string;
  result: PromSeries[];
}

export interface PrometheusServer {
  readonly url: string;
  /** An instant query at now. */
  query(expr: string): Promise<PromAnswer>;
  /** A range query, `start` and `end` in seconds since the epoch. */
  queryRange(expr: string, start: number, end: number, stepSeconds: number): Promise<PromAnswer>;
  /** A GET of the HTTP API (`/api/v1/targets`, `/api/v1/rules`, …): its `data`. */
  api(path: string): Promise<unknown>;
  /** Wait until every target has been scraped successfully `n` more times (bounded by `timeoutMs`). */
  scrapes(n: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface StartPrometheusOptions {
  /** Scrape targets: `job` label and `http://host:port` of a keel App (its metrics path is `/metrics`). */
  targets: { job: string; url: string; metricsPath?: string }[];
  /** Rule files to load (absolute paths), evaluated every second. */
  ruleFiles?: string[];
}

export async function startPrometheus(options: StartPrometheusOptions): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-prometheus-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // JSON is YAML: no YAML writer needed for the configuration.
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: options.targets.map((t) => ({
      job_name: t.job,
      metrics_path: t.metricsPath ?? '/metrics',
      static_configs: [{ targets: [new URL(t.url).host] }],
    })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const proc: ChildProcess = spawn(PROMETHEUS, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
  const exited = once(proc, 'exit');

  const get = async (path: string): Promise<{ status: string; error?: string; data?: unknown }> => {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
    return (await res.json()) as { status: string; error?: string; data?: unknown };
  };
  const answer = (body: { status: string; error?: string; data?: unknown }): PromAnswer => {
    const data = body.data as { result?: PromSeries[] } | undefined;
    return { status: body.status === 'success' ? 'success' : 'error', error: body.error, result: data?.result ?? [] };
  };

  const server: PrometheusServer = {
    url,
    query: async (expr) => answer(await get(`/api/v1/query?query=${encodeURIComponent(expr)}`)),
    queryRange: async (expr, start, end, step) => answer(await get(`/api/v1/query_range?query=${encodeURIComponent(expr)}&start=${start}&end=${end}&step=${step}`)),
    api: async (path) => (await get(path)).data,
    async scrapes(n, timeoutMs = 30_000) {
      // lastScrape moves once per successful scrape of a target: count the moves of the slowest one.
      const deadline = Date.now() + timeoutMs;
      const seen = new Map<string, { last: string; count: number }>();
      for (;;) {
        const data = (await server.api('/api/v1/targets')) as { activeTargets: { scrapeUrl: string; health: string; lastScrape: string; lastError: string }[] };
        for (const t of data.activeTargets) {
          const s = seen.get(t.scrapeUrl);
          if (!s) seen.set(t.scrapeUrl, { last: t.lastScrape, count: 0 });
          else if (t.health === 'up' && t.lastScrape !== s.last) seen.set(t.scrapeUrl, { last: t.lastScrape, count: s.count + 1 });
        }
        const counts = [...seen.values()].map((s) => s.count);
        if (counts.length === options.targets.length && counts.every((c) => c >= n)) return;
        if (Date.now() > deadline) throw new Error(`Prometheus did not scrape ${n} times within ${timeoutMs} ms: ${JSON.stringify(data.activeTargets.map((t) => [t.scrapeUrl, t.health, t.lastError]))}`);
        await sleep(250);
      }
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (proc.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`prometheus exited (${proc.exitCode}) at start: ${log}`);
    }
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`prometheus was not ready within ${START_TIMEOUT_MS} ms: ${log}`);
    }
    await sleep(200);
  }
}

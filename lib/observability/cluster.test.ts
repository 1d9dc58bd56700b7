// keel:integration
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/helpers/redis-server.js';

const script = fileURLToPath(new URL('../../test/fixtures/cluster-metrics-app.ts', import.meta.url));

/**
 * The fixture cluster on a free port: its process, its exit, its output so far, and `ready` (its base URL once the
 * primary prints its ready line; rejected if the cluster exits first).
 */
async function startCluster() {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(port)], {
    env: { ...process.env, NODE_ENV: 'test', KEEL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { child, stdout: '', stderr: '', exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>, ready: Promise.resolve('') };
  child.stdout.on('data', (c: Buffer) => (output.stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output.stderr += c.toString()));
  output.ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      if (output.stdout.includes('"ready":true')) resolve(`http://127.0.0.1:${port}`);
    });
    void output.exited.then(([code]) => reject(new Error(`cluster exited early (${code}): ${output.stderr}`)));
  });
  return output;
}

describe('when a workers: 2 server has metrics on', () => {
  it('should answer every scrape, whichever worker it reaches, with the counts of both workers', { timeout: 120_000 }, async () => {
    const cluster = await startCluster();
    const { child, exited } = cluster;
    try {
      const base = await cluster.ready;
      const pids = new Set<number>();
      const N = 30;
      for (let i = 0; i < N; i++) {
        const res = await fetch(`${base}/pid`);
        assert.equal(res.status, 200);
        pids.add(((await res.json()) as { pid: number }).pid);
      }
      assert.equal(pids.size, 2, 'both workers served requests');
      // Several scrapes: each lands on either worker, and each counts all N requests.
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${base}/metrics`);
        assert.equal(res.status, 200);
        const text = await res.text();
        assert.match(text, new RegExp(`^keel_http_requests_total\\{method="GET",route="/pid",status="200"\\} ${N}$`, 'm'), text.slice(0, 2000));
        assert.match(text, new RegExp(`^keel_http_request_duration_seconds_count\\{method="GET",route="/pid",status="200"\\} ${N}$`, 'm'));
        // Gauges as declared: the dependency the minimum over workers (1, not 2).
        assert.match(text, /^keel_dependency_up\{dependency="background"\} 1$/m);
        assert.match(text, /^keel_cluster_worker_restarts_total 0$/m);
      }

      // Event-loop lag is the worst worker's, not the mean: the next test.

      // A worker dies: its counts stay in the sum (a counter that fell would read as a reset: issue 47).
      const victim = [...pids][0]!;
      process.kill(victim, 'SIGKILL');
      // A kept-alive socket to the killed worker resets: the client's usual retry, on a new connection.
      const get = async (p: string): Promise<Response> => {
        try {
          return await fetch(`${base}${p}`);
        } catch {
          return fetch(`${base}${p}`, { headers: { connection: 'close' } });
        }
      };
      const requests = async () => Number(/^keel_http_requests_total\{method="GET",route="\/pid",status="200"\} (\d+)$/m.exec(await (await get('/metrics')).text())?.[1]);
      const deadline = Date.now() + 60_000;
      while (!/"msg":"worker exited; starting another"/.test(cluster.stdout) || !/^keel_cluster_worker_restarts_total 1$/m.test(await (await get('/metrics')).text())) {
        assert.ok(Date.now() < deadline, `no restart seen: ${cluster.stdout}`);
        assert.equal(await requests(), N, 'the dead worker\'s requests are still counted');
        await new Promise((r) => setTimeout(r, 100));
      }
      const line = cluster.stdout.split('\n').find((l) => l.includes('worker exited'))!;
      assert.equal(line.match(/"pid":/g)?.length, 1, `one pid key: ${line}`);
      assert.match(line, new RegExp(`"worker_pid":${victim}\\b`));
      assert.match(line, /"signal":"SIGKILL"/);
      for (let i = 0; i < 10; i++) assert.equal((await get('/pid')).status, 200);
      for (let i = 0; i < 4; i++) assert.equal(await requests(), N + 10, 'new requests add to the kept counts');
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0, cluster.stderr);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('should give a worker blocked 900 ms as the event-loop lag, not the mean with an idle one', { timeout: 60_000 }, async () => {
    const { child, ready } = await startCluster();
    try {
      const base = await ready;
      await fetch(`${base}/metrics`); // both lag histograms start again from here
      assert.equal((await fetch(`${base}/block?ms=900`)).status, 200);
      const lag = Number(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1]);
      assert.ok(lag >= 0.6, `nodejs_eventloop_lag_p99_seconds ${lag}: the worst worker's, not the mean`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/helpers/redis-server.js';

const script = fileURLToPath(new URL('../../test/fixtures/cluster-metrics-app.ts', import.meta.url));

describe('when a workers: 2 server has metrics on', () => {
  it('should answer every scrape, whichever worker it reaches, with the counts of both workers', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', script, String(port)], {
      env: { ...process.env, NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('"ready":true')) resolve();
        });
        void exited.then(([code]) => reject(new Error(`cluster exited early (${code}): ${stderr}`)));
      });
      const base = `http://127.0.0.1:${port}`;
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
      }
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0, stderr);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

/** Start and stop fixture instances (fixtures/instance.ts) as child processes. */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnFixture } from '../helpers/spawn-fixture.js';

export interface Instance {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:port`, or '' for a worker. */
  readonly url: string;
  output(): string;
  /** SIGTERM and wait for the exit code; after 30 s, SIGKILL and 'hung'. */
  stop(): Promise<number | null | 'hung'>;
  kill(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./fixtures/instance.ts', import.meta.url));

export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const fixture = await spawnFixture(SCRIPT, {
    env: { NODE_ENV: 'test', KEEL_LOG_LEVEL: process.env.KEEL_TEST_LOG ?? 'silent', ...env },
    ready: /READY (\S+)/,
    // Instances of a Redis Cluster connect to every node before they are up; a busy machine is slow at it.
    readyMs: 120_000,
  });
  return {
    child: fixture.child,
    url: fixture.ready[1] === 'worker' ? '' : fixture.ready[1]!,
    output: fixture.output,
    stop: () => fixture.stop(30_000),
    kill: fixture.kill,
  };
}

/** Start and stop fixture instances (fixtures/instance.ts) as child processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

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
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { ...process.env, NODE_ENV: 'test', KEEL_LOG_LEVEL: process.env.KEEL_TEST_LOG ?? 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /READY (\S+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(m[1] === 'worker' ? '' : m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`instance exited (${code}) before it was ready: ${out}`)));
  });
  return {
    child, url,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit').then(([code]) => code as number | null);
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), 30_000)));
      const result = await Promise.race([exited, hung]);
      clearTimeout(timer);
      if (result === 'hung') {
        child.kill('SIGKILL');
        await exited;
      }
      return result;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

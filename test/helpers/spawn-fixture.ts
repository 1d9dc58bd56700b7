/**
 * A server fixture in a process of its own (a TypeScript file run under tsx, e.g. examples/server.ts), for tests and
 * bench replays that need a real process: started, then awaited until a line of its output says it is up, within a
 * bounded time. Its output is kept for the error that says why it did not come up.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How long a fixture may take to say it is up, ms: 60000 (tsx compiles it first, on a machine others share). */
export const DEFAULT_FIXTURE_READY_MS = 60_000;
/** How long stop() waits after SIGTERM before SIGKILL, ms: 30000. */
export const DEFAULT_FIXTURE_STOP_MS = 30_000;

export interface SpawnFixtureOptions {
  /** Matched against the fixture's stdout as it grows: the fixture is up when it matches. */
  ready: RegExp;
  /** Arguments after the script. */
  args?: readonly string[];
  /** Node options before `--import tsx`. */
  nodeArgs?: readonly string[];
  /** Added to this process's environment. */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  /** `'inherit'`: the fixture's stderr goes to this process's (bench replays); default: kept with its output. */
  stderr?: 'pipe' | 'inherit';
  /** Default {@link DEFAULT_FIXTURE_READY_MS}. */
  readyMs?: number;
}

export interface Fixture {
  readonly child: ChildProcess;
  /** The match of `ready` (its groups: the URL or port the fixture printed). */
  readonly ready: RegExpExecArray;
  /** What the fixture wrote so far: stdout, and stderr unless inherited. */
  output(): string;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`: the exit code, or 'hung' when it had to be killed. */
  stop(graceMs?: number): Promise<number | null | 'hung'>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

export async function spawnFixture(script: string, options: SpawnFixtureOptions): Promise<Fixture> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', script, ...(options.args ?? [])], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
  });
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => { out += c.toString(); stdout += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const kill = async (): Promise<void> => {
    if (gone()) return;
    child.kill('SIGKILL');
    await exited;
  };
  const readyMs = options.readyMs ?? DEFAULT_FIXTURE_READY_MS;
  let timer: NodeJS.Timeout | undefined;
  let onData: (() => void) | undefined;
  try {
    const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
      onData = () => {
        const m = options.ready.exec(stdout);
        if (m) resolve(m);
      };
      child.stdout!.on('data', onData);
      void exited.then(([code, signal]) => reject(new Error(`${script} exited (${code ?? signal}) before it was up: ${out.slice(-2000)}`)));
      timer = setTimeout(() => reject(new Error(`${script} not up within ${readyMs} ms: ${out.slice(-2000)}`)), readyMs);
    });
    return {
      child, ready, exited, kill,
      output: () => out,
      async stop(graceMs = DEFAULT_FIXTURE_STOP_MS) {
        if (gone()) return child.exitCode;
        child.kill('SIGTERM');
        let grace: NodeJS.Timeout | undefined;
        const hung = new Promise<'hung'>((r) => (grace = setTimeout(() => r('hung'), graceMs)));
        const result = await Promise.race([exited.then(([code]) => code), hung]);
        clearTimeout(grace);
        if (result === 'hung') await kill();
        return result;
      },
    };
  } catch (err) {
    await kill();
    throw err;
  } finally {
    clearTimeout(timer);
    if (onData) child.stdout!.off('data', onData);
  }
}

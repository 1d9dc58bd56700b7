/**
 * Per-case mode for any language (`keel-conformance --exec "cmd {case_file} {port}"`): the runner
 * starts the implementation's server for a group of cases, waits until it accepts connections,
 * runs the group's cases against it, and stops it.
 *
 * `{case_file}` is a manifest (manifest.ts, schemas/ConformanceManifest.schema.json) holding only the
 * group's cases; `{port}` a free loopback port the server must listen on (127.0.0.1).
 *
 * Groups (`--group`, grouping.ts):
 * - `route` (default): as few servers as possible without changing a verdict. Cases share a server
 *   unless two handler definitions would take one request (`/items/{id}` and `/items/{item_id}`);
 *   a case whose answer depends on the server's other routes (404, 405, `Allow`, HEAD, OPTIONS) shares
 *   only with cases of its own handler definition; a rate-limited case gets its own server.
 * - `handler`: one server per distinct handler definition;
 * - `case`: one server per case.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NoResponseError } from './client.js';
import { buildManifest } from './manifest.js';
import { planGroups, type ExecGrouping } from './grouping.js';
import { canBind, canConnect, freePort } from './ports.js';

export { FREE_PORT_RANGE, freePort, parsePortRange } from './ports.js';
import type { CaseTarget } from './runner.js';
import { isProtocolCase, type ConformanceCase, type ProtocolCase } from './types.js';

export { EXEC_GROUPINGS, planGroups, type ExecGrouping } from './grouping.js';
/** How long a started server has to accept connections (default), milliseconds. */
export const DEFAULT_EXEC_START_TIMEOUT_MS = 15_000;
/** How long a server has to exit after SIGTERM before it is killed, milliseconds. */
const STOP_GRACE_MS = 3_000;
/** Bytes of the server's stderr kept for error messages. */
const STDERR_TAIL = 4096;

export interface ExecOptions {
  /** The command line; `{case_file}` and `{port}` are replaced (the command runs in a shell). */
  command: string;
  group?: ExecGrouping;
  startTimeoutMs?: number;
  /**
   * Ports the servers may listen on, `[first, last]` inclusive (default: any free port the system
   * gives). CI sandboxes often allow only some; each server gets a free port from the range.
   */
  portRange?: readonly [number, number];
  /** Working directory of the command (default: the current one). */
  cwd?: string;
  /**
   * Start the next group's server while the current group runs (default true): server start-up,
   * not the cases, is most of an --exec run. At most two servers are up at once, on different ports.
   */
  prefetch?: boolean;
}

/** Exit status in words: `exit code 3`, `signal SIGKILL`. */
function exitStatus(child: ChildProcess): string {
  return child.signalCode !== null ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}

/** The last lines of a server's stderr, indented, or a note that it wrote none. */
function stderrTail(stderr: string, lines = 20): string {
  const text = stderr.trimEnd();
  if (!text) return '\n  (nothing on stderr)';
  return `\n  last lines of its stderr:\n${text.split(/\r?\n/).slice(-lines).map((l) => `    ${l}`).join('\n')}`;
}

/** How long a server that dropped a connection has to be seen exiting before it is taken to be alive. */
const EXIT_GRACE_MS = 1_000;

/** Send `sig` to a server's process group (the shell and what it started). */
function signal(r: { child: ChildProcess }, sig: NodeJS.Signals): void {
  try {
    if (process.platform !== 'win32' && r.child.pid) process.kill(-r.child.pid, sig);
    else r.child.kill(sig);
  } catch {
    // Already gone.
  }
}

const shellQuote = (s: string) => (process.platform === 'win32' ? `"${s}"` : `'${s.replace(/'/g, `'\\''`)}'`);

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  baseUrl: string;
  port: number;
  command: string;
  stderr: () => string;
}

/** A case failed because its group's server is gone (reported in full once, then by reference). */
export class ServerDiedError extends Error {
  override name = 'ServerDied';
}

/**
 * A case failed because its group's server stopped answering (no answer within the per-request
 * timeout while the process still runs: stopped, deadlocked, a handler that never answers). The
 * server is killed; reported in full once, the group's remaining cases are not sent.
 */
export class ServerNotAnsweringError extends Error {
  override name = 'ServerNotAnswering';
}

/**
 * A runner target that serves each group through the command. Run the cases in `order` (grouped)
 * so each server starts once; `close()` stops the last one and removes the case files.
 */
export function execTarget(cases: readonly (ConformanceCase | ProtocolCase)[], options: ExecOptions): { order: (ConformanceCase | ProtocolCase)[]; target: (c: ConformanceCase | ProtocolCase) => Promise<CaseTarget>; close: () => Promise<void>; launches: () => number } {
  // A protocol case (kinds/) gets a server of its own: its manifest holds that case alone.
  const groups: (ConformanceCase | ProtocolCase)[][] = [...planGroups(cases.filter((c): c is ConformanceCase => !isProtocolCase(c)), options.group ?? 'route'), ...cases.filter(isProtocolCase).map((c) => [c])];
  const groupOf = new Map<string, number>();
  groups.forEach((g, i) => g.forEach((c) => groupOf.set(c.id, i)));
  const dir = mkdtempSync(join(tmpdir(), 'keel-conformance-exec-'));
  let current: { index: number; running?: Running; error?: Error; reportedAt?: string; hung?: boolean } | undefined;
  let launches = 0;
  // Ports handed to servers not yet stopped: with a range, a prefetched server must not get the port
  // the current one was given but may not have bound yet.
  const inUse = new Set<number>();
  let cursor = 0;
  async function pickPort(): Promise<number> {
    const range = options.portRange;
    if (!range) return freePort();
    const size = range[1] - range[0] + 1;
    for (let i = 0; i < size; i++) {
      const port = range[0] + ((cursor + i) % size);
      if (inUse.has(port)) continue;
      // Taken ports are skipped.
      if ((await canBind(port)) !== undefined) {
        cursor = (cursor + i + 1) % size;
        return port;
      }
    }
    throw new Error(`--port-range ${range[0]}-${range[1]}: no free port on 127.0.0.1 in the range`);
  }
  const pending = new Map<number, Promise<Running>>();
  const launch = (index: number): Promise<Running> => {
    let p = pending.get(index);
    if (!p) {
      p = start(index);
      p.catch(() => undefined); // Reported when the group runs.
      pending.set(index, p);
    }
    return p;
  };

  async function stop(r: Running | undefined): Promise<void> {
    if (r) inUse.delete(r.port);
    if (!r || r.child.exitCode !== null || r.child.signalCode !== null) return;
    signal(r, 'SIGTERM');
    const done = await Promise.race([r.exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
    if (!done) await kill(r);
  }

  /** SIGKILL to the server's process group (a stopped process cannot act on SIGTERM), and wait for it. */
  async function kill(r: Running): Promise<void> {
    if (r.child.exitCode !== null || r.child.signalCode !== null) return;
    signal(r, 'SIGKILL');
    await r.exited;
  }

  async function start(index: number): Promise<Running> {
    const file = join(dir, `group-${index + 1}.json`);
    writeFileSync(file, JSON.stringify(buildManifest(groups[index]!), null, 2));
    const port = await pickPort();
    inUse.add(port);
    const command = options.command.replaceAll('{case_file}', shellQuote(file)).replaceAll('{port}', String(port));
    launches++;
    const child = spawn(command, { shell: true, detached: process.platform !== 'win32', stdio: ['ignore', 'ignore', 'pipe'], ...(options.cwd ? { cwd: options.cwd } : {}) });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const running: Running = { child, exited, baseUrl: `http://127.0.0.1:${port}`, port, command, stderr: () => stderr };
    const deadline = performance.now() + (options.startTimeoutMs ?? DEFAULT_EXEC_START_TIMEOUT_MS);
    while (performance.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        inUse.delete(port);
        throw new Error(`--exec command exited (${child.exitCode ?? child.signalCode}) before listening on port ${port}: ${command}${stderr ? `\n${stderr.trim()}` : ''}`);
      }
      if (await canConnect(port)) return running;
      await sleep(20);
    }
    await stop(running);
    throw new Error(`--exec server did not accept connections on 127.0.0.1:${port} within ${options.startTimeoutMs ?? DEFAULT_EXEC_START_TIMEOUT_MS} ms: ${command}${stderr ? `\n${stderr.trim()}` : ''}`);
  }

  return {
    order: groups.flat(),
    launches: () => launches,
    async target(c) {
      const index = groupOf.get(c.id);
      if (index === undefined) throw new Error(`case ${c.id} was not planned for --exec`);
      if (current?.index !== index) {
        await stop(current?.running);
        if (current) pending.delete(current.index);
        current = { index };
        const next = launch(index);
        if ((options.prefetch ?? true) && index + 1 < groups.length) launch(index + 1);
        try {
          current.running = await next;
        } catch (err) {
          current.error = err as Error;
        }
      }
      const group = current;
      if (group.error) {
        // Said in full once; the group's other cases point to it.
        if (group.reportedAt) throw new ServerDiedError(`the group's server did not start (see ${group.reportedAt})`);
        group.reportedAt = c.id;
        throw group.error;
      }
      const running = group.running!;
      const died = (during: string) => {
        if (group.reportedAt) return new ServerDiedError(`server died: the group's server exited earlier (${exitStatus(running.child)}, reported at ${group.reportedAt}); not sent`);
        group.reportedAt = c.id;
        return new ServerDiedError(`server died ${during}: ${exitStatus(running.child)} (port ${running.port}): ${running.command}${stderrTail(running.stderr())}`);
      };
      if (group.hung) throw new ServerNotAnsweringError(`server not answering: the group's server stopped answering (reported at ${group.reportedAt}); not sent`);
      if (running.child.exitCode !== null || running.child.signalCode !== null) throw died('before this case; not sent');
      return {
        baseUrl: running.baseUrl,
        // A dropped or refused connection: if the server exited, that is what the case reports. No
        // answer within the timeout from a server still running: it is hung (stopped, or a handler
        // that never answers); it is killed, so the run goes on, and said once.
        async explain(err) {
          if (err instanceof NoResponseError && running.child.exitCode === null && running.child.signalCode === null) {
            group.hung = true;
            group.reportedAt = c.id;
            const pid = running.child.pid;
            await kill(running);
            return new ServerNotAnsweringError(`server not answering: ${err.message} during this case, the process still running (pid ${pid}, port ${running.port}; killed, the group's remaining cases are not sent): ${running.command}${stderrTail(running.stderr())}`);
          }
          await Promise.race([running.exited, sleep(EXIT_GRACE_MS)]);
          return running.child.exitCode !== null || running.child.signalCode !== null ? died('during this case') : undefined;
        },
      };
    },
    async close() {
      await stop(current?.running);
      if (current) pending.delete(current.index);
      await Promise.all([...pending.values()].map((p) => p.then(stop, () => undefined)));
      pending.clear();
      current = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

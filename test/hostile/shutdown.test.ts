/**
 * Attack replay (issue 13, item 4/5): SIGTERM to a real child-process server while 64 keep-alive
 * clients each have a request in flight (the handler takes 200 ms and enqueues a background job).
 * Every in-flight request must be answered (0 lost), every response sent after SIGTERM must carry
 * `Connection: close`, no in-flight request may get a 503 from the background executor, and the
 * process must exit 0 after the executor drained. Also with `workers: 2` (node:cluster).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../harness/conformance/exec.js';

const script = fileURLToPath(new URL('./fixtures/shutdown-app.ts', import.meta.url));
const CLIENTS = 64;

interface Answer {
  status: number;
  connection: string | undefined;
  /** The server had begun shutting down when it wrote this answer. */
  shuttingDown: boolean;
}

interface Outcome {
  /** Requests in flight at SIGTERM (sent before it, not yet answered). */
  inFlight: number;
  /** In-flight requests that failed (reset, or no answer). */
  lost: string[];
  /** Answers that arrived after SIGTERM. */
  afterSignal: Answer[];
  exitCode: number | null;
  stderr: string;
}

/**
 * `path` /slow: every client has a request in the 200 ms handler at SIGTERM and stops after its answer.
 * `path` /fast: clients keep sending back to back after SIGTERM until an answer says Connection: close.
 */
async function sigtermUnderLoad(workers: number, path: '/slow' | '/fast' = '/slow'): Promise<Outcome> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(port), String(workers)], {
    env: { ...process.env, NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve();
    });
    void exited.then(([code]) => reject(new Error(`server exited early (${code}): ${stderr}`)));
  });

  let signalled = false;
  let inFlight = 0;
  const lost: string[] = [];
  const afterSignal: Outcome['afterSignal'] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  let warm = 0;
  let allWarm!: () => void;
  const warmed = new Promise<void>((r) => (allWarm = r));

  /** One keep-alive client: requests back to back until SIGTERM (/slow) or until told to close (/fast). */
  async function client(): Promise<void> {
    let first = true;
    let counted = false;
    for (;;) {
      if (signalled && path === '/slow') return;
      const result = await new Promise<Answer | Error>((resolve) => {
        // After its first answer a /slow client holds its next request until SIGTERM: in flight at the signal
        // whatever the machine's load (the 100 ms below no longer has to land mid-handler).
        const req = http.get({ host: '127.0.0.1', port, path: path === '/slow' && !first ? '/slow?hold=1' : path, agent }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => {
            const shuttingDown = res.statusCode === 200 && (JSON.parse(body) as { shuttingDown: boolean }).shuttingDown;
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, shuttingDown });
          });
          res.on('error', resolve);
        });
        req.on('error', resolve);
        req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
      });
      if (first && ++warm === CLIENTS) allWarm();
      first = false;
      if (signalled) {
        if (!counted) inFlight++;
        counted = true;
        if (result instanceof Error) return void lost.push(result.message);
        afterSignal.push(result);
        if (result.status !== 200) return void lost.push(`status ${result.status}`);
        if (path === '/slow' || result.connection === 'close') return;
        continue;
      }
      if (result instanceof Error) lost.push(`before SIGTERM: ${result.message}`);
    }
  }

  const clients = Array.from({ length: CLIENTS }, () => client());
  await warmed;
  // Every client now has a keep-alive connection and sends back to back: mid-way through a 200 ms handler.
  await new Promise((r) => setTimeout(r, 100));
  signalled = true;
  child.kill('SIGTERM');
  await Promise.all(clients);
  agent.destroy();
  const [exitCode] = await exited;
  return { inFlight, lost, afterSignal, exitCode, stderr };
}

/** Answers written after the server saw SIGTERM say Connection: close; every in-flight one was (it was held). */
function assertClosing(r: Outcome): void {
  const late = r.afterSignal.filter((a) => a.shuttingDown);
  assert.equal(late.length, CLIENTS, `every in-flight request was answered during shutdown (${late.length})`);
  assert.deepEqual(late.filter((a) => a.connection !== 'close'), [], 'every answer written during shutdown says Connection: close');
}

describe('when a server under 64 keep-alive clients gets SIGTERM', () => {
  it('should answer every in-flight request with Connection: close and exit 0 after draining', async () => {
    const r = await sigtermUnderLoad(1);
    assert.equal(r.inFlight, CLIENTS, 'every client had a request in flight');
    assert.deepEqual(r.lost, [], `lost ${r.lost.length} of ${r.inFlight}`);
    assertClosing(r);
    assert.equal(r.exitCode, 0, r.stderr);
    const exit = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { jobsDone: number };
    assert.ok(exit.jobsDone >= CLIENTS, `the background jobs of the in-flight requests ran before exit (${exit.jobsDone})`);
  });

  it('should lose none when clients of a synchronous route keep sending until told to close', async () => {
    // node's http.Server#close() destroys idle keep-alive connections at once; with a fast handler a
    // connection is idle between requests while the next one is already on the wire: all 64 were lost.
    const r = await sigtermUnderLoad(1, '/fast');
    assert.equal(r.inFlight, CLIENTS);
    assert.deepEqual(r.lost, [], `lost ${r.lost.length} of ${r.inFlight} clients' requests`);
    assert.deepEqual(r.afterSignal.filter((a) => a.shuttingDown && a.connection !== 'close'), [], 'every answer written during shutdown says Connection: close');
    assert.equal(r.exitCode, 0, r.stderr);
  });

  it('should lose none with workers: 2 either', async () => {
    const r = await sigtermUnderLoad(2);
    assert.equal(r.inFlight, CLIENTS);
    assert.deepEqual(r.lost, [], `lost ${r.lost.length} of ${r.inFlight}`);
    assertClosing(r);
    assert.equal(r.exitCode, 0, r.stderr);
  });
});

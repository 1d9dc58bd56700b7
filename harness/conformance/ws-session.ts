/**
 * Playing a WebSocket session case against a server: connect to `ws://<target><route>`, play the
 * case's messages in order (send a frame / wait for the next frame and compare it), check
 * `expected_receive_count` after a quiet period, then close with `close_code` (or drop the connection
 * for `abnormal_close`). Every frame either way is kept in a transcript for the report. The player
 * never hangs: each wait (handshake, receive, closing handshake) has the run's timeout.
 *
 * Comparison rules: a receive step matches the next *data* frame (text or binary) unless it expects a
 * ping or pong; control frames the step does not expect (server heartbeats) are passed over and only
 * logged. `payload` is compared as JSON with the body rules of compare.ts (diffJson), `raw_text`
 * exactly, `payload_base64` byte for byte; a step without any only checks the frame type.
 */
import type WsSocket from 'ws';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import { missingPackages, missingPackagesError } from '../../lib/ops/packages.js';
import { jsonText } from './client.js';
import { diffJson, type Mismatch } from './compare.js';
import type { WebSocketCaseMessage, WebSocketCaseSession } from './types.js';

/** How long the player waits for frames that must not come (`expected_receive_count`), milliseconds. */
export const DEFAULT_QUIET_MS = 200;
/** Longest text kept per frame in a transcript. */
const MAX_LOGGED_TEXT = 300;

export type FrameType = 'text' | 'binary' | 'ping' | 'pong' | 'close';

/** One frame of a transcript: text as text, bytes as base64; a close with its code and reason. */
export interface FrameLog {
  direction: 'sent' | 'received';
  type: FrameType;
  text?: string;
  base64?: string;
  code?: number;
  reason?: string;
  /** A frame passed over (a control frame no step expected). */
  note?: string;
}

export interface SessionOutcome {
  mismatches: Mismatch[];
  transcript: FrameLog[];
  /** The session could not be played at all (refused upgrade, connection error, bad case). */
  error?: string;
}

export interface SessionOptions {
  /** Budget of each wait: handshake, each receive, the closing handshake. */
  timeoutMs: number;
  /** Quiet period before `expected_receive_count` is checked (default DEFAULT_QUIET_MS). */
  quietMs?: number;
  /** Headers of the upgrade request (the case-id header). */
  headers?: Record<string, string>;
}

type Frame = { type: Exclude<FrameType, 'close'>; data: Buffer };
const loadWs = lazyRequire<typeof WsSocket>('ws');

function logOf(direction: FrameLog['direction'], f: Frame): FrameLog {
  if (f.type !== 'text') return { direction, type: f.type, base64: f.data.toString('base64') };
  const text = f.data.toString('utf8');
  return { direction, type: 'text', text: text.length > MAX_LOGGED_TEXT ? `${text.slice(0, MAX_LOGGED_TEXT)}… (${text.length} characters)` : text };
}

/** The frame a send step describes. */
function frameOf(m: WebSocketCaseMessage): Frame {
  const type = m.frame_type ?? 'text';
  if (m.raw_text !== undefined) return { type, data: Buffer.from(m.raw_text, 'utf8') };
  if ('payload' in m) return { type, data: Buffer.from(jsonText(m.payload), 'utf8') };
  return { type, data: Buffer.from(m.payload_base64 ?? '', 'base64') };
}

/** Differences between a receive step and the frame that came. */
export function compareFrame(step: WebSocketCaseMessage, got: Frame, label: string): Mismatch[] {
  const want = step.frame_type ?? 'text';
  if (got.type !== want) return [{ what: `${label} frame type`, expected: want, actual: got.type }];
  const out: Mismatch[] = [];
  if (step.payload_base64 !== undefined) {
    const actual = got.data.toString('base64');
    if (actual !== step.payload_base64) out.push({ what: `${label} bytes`, expected: step.payload_base64, actual, note: 'base64' });
  } else if (step.raw_text !== undefined) {
    const actual = got.data.toString('utf8');
    if (actual !== step.raw_text) out.push({ what: `${label} text`, expected: step.raw_text, actual });
  } else if ('payload' in step) {
    const text = got.data.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [{ what: `${label} payload`, expected: step.payload, actual: text, note: 'the frame is not JSON' }];
    }
    const diffs: Mismatch[] = [];
    diffJson(step.payload, value, '$', diffs);
    for (const d of diffs) out.push({ ...d, what: d.what.replace(/^body /, `${label} payload `) });
  }
  return out;
}

/** Play `session` against `url` (ws:// or wss://). Resolves with the differences and the transcript; never rejects. */
export async function playSession(url: string, session: WebSocketCaseSession, options: SessionOptions): Promise<SessionOutcome> {
  const transcript: FrameLog[] = [];
  const mismatches: Mismatch[] = [];
  if (missingPackages(['ws@8']).length) return { mismatches, transcript, error: missingPackagesError('WebSocket session cases (keel-conformance)', ['ws@8']).message };
  const WebSocket = loadWs();
  const inbox: Frame[] = [];
  let dataFrames = 0;
  let wake: (() => void) | undefined;
  // Set by the 'close' listener: read through `closedBy()` (TypeScript does not see callbacks assign it).
  let serverClose: { code: number; reason: string } | undefined;
  const closedBy = () => serverClose;
  let dropped = false;
  let ws: WsSocket;
  try {
    // A session that asks for a subprotocol (graphql-transport-ws) offers it; ws then insists the server selects it.
    ws = new WebSocket(url, session.subprotocol ? [session.subprotocol] : [], { headers: options.headers ?? {}, handshakeTimeout: options.timeoutMs });
  } catch (err) {
    return { mismatches, transcript, error: `could not open ${url}: ${(err as Error).message}` };
  }
  const push = (f: Frame) => {
    inbox.push(f);
    if (f.type === 'text' || f.type === 'binary') dataFrames++;
    wake?.();
  };
  ws.on('message', (data: Buffer, isBinary: boolean) => push({ type: isBinary ? 'binary' : 'text', data }));
  ws.on('ping', (data: Buffer) => push({ type: 'ping', data }));
  ws.on('pong', (data: Buffer) => push({ type: 'pong', data }));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code: number, reason: Buffer) => {
    serverClose = { code, reason: reason.toString('utf8') };
    // After our own drop, 1006 is ws's word for it, not a frame that came.
    if (!dropped) transcript.push({ direction: 'received', type: 'close', ...serverClose });
    wake?.();
    resolve(serverClose);
  }));
  const waitFor = async (ready: () => boolean, ms: number): Promise<boolean> => {
    const deadline = performance.now() + ms;
    while (!ready()) {
      const left = deadline - performance.now();
      if (left <= 0 || serverClose) return ready();
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        wake = () => { clearTimeout(t); r(); };
      });
      wake = undefined;
    }
    return true;
  };

  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`the upgrade was refused with HTTP ${res.statusCode}`)));
      ws.once('error', (err: Error) => reject(err));
    });
  } catch (err) {
    ws.terminate();
    return { mismatches, transcript, error: `could not open ${url}: ${(err as Error).message}` };
  }
  ws.on('error', () => {}); // after 'open', errors end in 'close', which the steps see.

  for (const [i, step] of session.messages.entries()) {
    const label = `message ${i + 1} (${step.direction})`;
    if (serverClose) {
      mismatches.push({ what: label, expected: step.direction === 'send' ? 'an open connection' : `a ${step.frame_type ?? 'text'} frame`, actual: `the server closed the connection (${serverClose.code}${serverClose.reason ? ` ${serverClose.reason}` : ''})` });
      break;
    }
    if (step.direction === 'send') {
      const f = frameOf(step);
      transcript.push(logOf('sent', f));
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        if (f.type === 'text' || f.type === 'binary') ws.send(f.data, { binary: f.type === 'binary' }, done);
        else if (f.type === 'ping') ws.ping(f.data, undefined, done);
        else ws.pong(f.data, undefined, done);
      });
      continue;
    }
    const want = step.frame_type ?? 'text';
    const wanted = (f: Frame) => (want === 'ping' || want === 'pong' ? f.type === want || f.type === 'text' || f.type === 'binary' : f.type === 'text' || f.type === 'binary');
    const skipped = () => {
      while (inbox.length && !wanted(inbox[0]!)) transcript.push({ ...logOf('received', inbox.shift()!), note: `passed over: ${label} expects a ${want} frame` });
      return inbox.length > 0;
    };
    if (!(await waitFor(skipped, options.timeoutMs))) {
      mismatches.push({ what: label, expected: `a ${want} frame`, actual: closedBy() ? `the server closed the connection (${closedBy()!.code})` : `nothing within ${options.timeoutMs} ms` });
      break;
    }
    const got = inbox.shift()!;
    transcript.push(logOf('received', got));
    mismatches.push(...compareFrame(step, got, label));
  }

  if (session.expected_receive_count !== undefined && !serverClose) {
    await waitFor(() => false, options.quietMs ?? DEFAULT_QUIET_MS);
    if (dataFrames !== session.expected_receive_count) mismatches.push({ what: 'frames received', expected: session.expected_receive_count, actual: dataFrames, note: 'text and binary frames over the whole session' });
  }

  // Frames no step read still belong in the report.
  for (const f of inbox.splice(0)) transcript.push({ ...logOf('received', f), note: 'not read by any step' });
  const code = session.close_code ?? 1000;
  if (serverClose) {
    if (!mismatches.length) mismatches.push({ what: 'close', expected: `the client closes with ${code}`, actual: `the server closed the connection first (${serverClose.code}${serverClose.reason ? ` ${serverClose.reason}` : ''})` });
  } else if (session.abnormal_close || code === 1006) {
    // Dropped without a close frame: the server sees 1006 (RFC 6455 §7.1.5); nothing comes back to check.
    transcript.push({ direction: 'sent', type: 'close', code: 1006, note: 'connection dropped without a close frame' });
    dropped = true;
    ws.terminate();
    await closed;
  } else {
    try {
      if (code === 1005) ws.close();
      else ws.close(code);
    } catch (err) {
      ws.terminate();
      return { mismatches, transcript, error: `close_code ${code} cannot be sent in a close frame (RFC 6455 §7.4): ${(err as Error).message}` };
    }
    transcript.push({ direction: 'sent', type: 'close', code });
    const answered = await Promise.race([closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), options.timeoutMs).unref())]);
    if (!answered) {
      ws.terminate();
      mismatches.push({ what: 'closing handshake', expected: 'a close frame from the server', actual: `nothing within ${options.timeoutMs} ms` });
    } else if (answered.code === 1006) {
      mismatches.push({ what: 'closing handshake', expected: 'a close frame from the server', actual: 'the connection dropped without one (1006)' });
    }
  }
  return { mismatches, transcript };
}

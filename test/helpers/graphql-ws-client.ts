/**
 * A minimal graphql-transport-ws client for tests that need more than one exchange per socket
 * (the harness's graphqlSubscriptionSnapshot records one): connect + connection_init, send frames,
 * wait for a matching frame.
 */
import WebSocket from 'ws';

export type Frame = { type: string; id?: string; payload?: unknown };

/** Open `url` with the graphql-transport-ws subprotocol; resolves after connection_ack. */
export function connectGraphqlWs(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { headers });
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    ws.once('open', () => {
      sendFrame(ws, { type: 'connection_init' });
      waitForFrame(ws, (m) => m.type === 'connection_ack').then(() => resolve(ws), reject);
    });
  });
}

export function sendFrame(ws: WebSocket, frame: Frame): void {
  ws.send(JSON.stringify(frame));
}

/** The first frame matching `match` (rejects when the socket closes first). */
export function waitForFrame(ws: WebSocket, match: (m: Frame) => boolean): Promise<Frame> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const m = JSON.parse(data.toString()) as Frame;
      if (!match(m)) return;
      ws.off('message', onMessage);
      ws.off('close', onClose);
      resolve(m);
    };
    const onClose = (code: number) => {
      ws.off('message', onMessage);
      reject(new Error(`socket closed (${code}) before the frame arrived`));
    };
    ws.on('message', onMessage);
    ws.once('close', onClose);
  });
}

/** Wait (at most ~`ms`, polling every 10 ms) until `check(read())` holds; returns the last value read. */
export async function eventually<T>(read: () => T, check: (v: T) => boolean, ms = 2000): Promise<T> {
  for (let i = 0; i < ms / 10 && !check(read()); i++) await new Promise((r) => setTimeout(r, 10));
  return read();
}

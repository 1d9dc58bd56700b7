/**
 * A raw node:http2 client for tests that need what grpc-js hides: the HTTP status, the exact
 * trailers, hand-made frames and headers.
 */
import http2, { type IncomingHttpHeaders } from 'node:http2';
import { frameMessage } from './framing.js';

export interface RawResponse {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: Buffer;
  /** grpc-status from the trailers, or from the headers of a Trailers-Only response. */
  grpcStatus: number | undefined;
  grpcMessage: string | undefined;
}

export async function rawCall(address: string, path: string, messages: Buffer[], headers: Record<string, string> = {}, options: { framed?: boolean } = {}): Promise<RawResponse> {
  const session = http2.connect(`http://${address}`);
  session.on('error', () => {});
  try {
    return await new Promise<RawResponse>((resolve, reject) => {
      const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
      let head: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.on('response', (h) => (head = h));
      req.on('trailers', (t) => (trailers = t));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('error', reject);
      req.on('close', () => {
        const src = trailers['grpc-status'] !== undefined ? trailers : head;
        resolve({
          headers: head,
          trailers,
          body: Buffer.concat(chunks),
          grpcStatus: src['grpc-status'] === undefined ? undefined : Number(src['grpc-status']),
          grpcMessage: src['grpc-message'] as string | undefined,
        });
      });
      for (const m of messages) req.write(options.framed === false ? m : frameMessage(m, false));
      req.end();
    });
  } finally {
    session.close();
  }
}

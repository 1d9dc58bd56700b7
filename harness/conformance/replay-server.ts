/**
 * A test fixture: the server a variant must defeat. It has no routing, no validation and no auth; it
 * answers each request with the expected answer of the public case that sends the same method, path
 * (with its query) and body, and 404 when no case does. Against the public cases it passes most
 * framework-owned ones; against their generated variants (variants.ts) it must not.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildRequest } from './client.js';
import { isRunnable, type ConformanceCase, type LoadedCase } from './types.js';

const keyOf = (method: string, path: string, body: Buffer | undefined) => `${method.toUpperCase()} ${path} ${body?.toString('base64') ?? ''}`;

/** Listen on a free loopback port; resolves to the server and its base URL. */
export async function startReplayServer(cases: readonly LoadedCase[]): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const answers = new Map<string, ConformanceCase>();
  for (const c of cases) {
    if (!isRunnable(c)) continue;
    const wire = buildRequest(c.request);
    const key = keyOf(wire.method, wire.path, wire.body);
    if (!answers.has(key)) answers.set(key, c);
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const c = answers.get(keyOf(req.method ?? 'GET', req.url ?? '/', body));
      if (!c) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const e = c.expected;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(e.headers ?? {})) {
        const value = String(v);
        if (value === '<<absent>>' || value.includes('.*')) continue;
        headers[k] = value === '<<uuid>>' ? randomUUID() : value === '<<present>>' ? 'present' : value;
      }
      const text = e.body === undefined || e.body === null ? '' : typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
      if (text && typeof e.body !== 'string' && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      res.writeHead(e.status_code, headers).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

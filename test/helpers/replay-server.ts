/**
 * A test helper: the "replaying" server of issue 34 — no routing, no validation, no auth, no
 * limits. It answers each request with the answer it can find in the manifest the harness hands
 * it: the case named by the case-id header, else the case whose exact request (method, target,
 * body) this is, answering that case's `handler_response`. Against the shipped suite it shows what
 * the manifest gives away: the handler's answers, and none of the framework's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Manifest, ManifestCase } from '../../harness/conformance/manifest.js';

export interface ReplayServer {
  url: string;
  close(): Promise<void>;
}

export async function startReplayServer(manifest: Manifest): Promise<ReplayServer> {
  const byId = new Map(manifest.cases.map((c) => [c.id, c]));
  const byRequest = new Map<string, ManifestCase>();
  for (const c of manifest.cases) byRequest.set(`${c.request.method} ${c.request.path} ${c.request.body_base64 ?? ''}`, c);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const id = req.headers[manifest.case_header.toLowerCase()];
      const body = chunks.length ? Buffer.concat(chunks).toString('base64') : '';
      const c = (typeof id === 'string' ? byId.get(id) : undefined) ?? byRequest.get(`${req.method} ${req.url} ${body}`);
      if (!c) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{}');
        return;
      }
      const a = c.handler_response;
      if (a.error) {
        res.writeHead(a.status, { 'Content-Type': 'application/problem+json' }).end(JSON.stringify({ type: 'about:blank', status: a.status, ...(a.error.detail ? { detail: a.error.detail } : {}) }));
        return;
      }
      res.writeHead(a.status, { ...(a.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...a.headers });
      res.end(a.body !== undefined && req.method !== 'HEAD' && a.status !== 204 ? JSON.stringify(a.body) : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

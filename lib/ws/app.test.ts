import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { App } from '../app/app.js';
import { ConfigError } from '../http/errors.js';
import type { ServerHandle } from '../server/server.js';

type Opened = { ws: WebSocket; headers: Record<string, unknown>; first: Promise<Buffer> };
function open(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    // Listen before 'open': a message sent right after the handshake can arrive in the same read.
    const first = new Promise<Buffer>((r) => ws.once('message', r));
    let upgradeHeaders: Record<string, unknown> = {};
    ws.once('upgrade', (res) => (upgradeHeaders = res.headers));
    ws.once('open', () => resolve({ ws, headers: upgradeHeaders, first }));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
}

describe('when an App has a WebSocket route', () => {
  let handle: ServerHandle;
  let wsBase: string;
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1', enable_request_id: true, api_key_auth: { keys: ['k-1'] } });
    app.ws('/ws/echo', async (session) => {
      for await (const m of session) if (m.type === 'text' || m.type === 'binary') await session.send(m);
    });
    app.ws('/ws/who', async (session) => {
      await session.send(`request ${session.request.requestId}`);
      session.close(4000, 'done');
    }, { cors: { allowed_origins: ['https://app.example'] } });
    handle = await app.listen();
    wsBase = handle.url.replace('http', 'ws');
  });
  after(() => handle.close());

  it('should echo through the App', async () => {
    const { ws, first } = await open(`${wsBase}/ws/echo`, { 'X-API-Key': 'k-1' });
    ws.send('over keel');
    const data = await first;
    assert.equal(data.toString(), 'over keel');
    ws.close();
  });
  it('should refuse the upgrade without the server API key', async () => {
    await assert.rejects(open(`${wsBase}/ws/echo`), (e: { status?: number }) => e.status === 401);
  });
  it('should give the session the request id and send it on the 101 response', async () => {
    const { headers, first } = await open(`${wsBase}/ws/who`, { 'X-API-Key': 'k-1' });
    const data = await first;
    assert.ok(headers['x-request-id'], 'X-Request-ID on the 101');
    assert.equal(data.toString(), `request ${String(headers['x-request-id'])}`);
  });
  it('should refuse an origin the route\'s CORS record does not allow', async () => {
    await assert.rejects(open(`${wsBase}/ws/who`, { 'X-API-Key': 'k-1', Origin: 'https://evil.example' }), (e: { status?: number }) => e.status === 403);
  });
  it('should answer 404 for an upgrade to a path without a WebSocket route', async () => {
    await assert.rejects(open(`${wsBase}/ws/none`, { 'X-API-Key': 'k-1' }), (e: { status?: number }) => e.status === 404);
  });
});

describe('when the App shuts down', () => {
  it('should close open WebSocket connections with 1001', async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    app.ws('/hold', async (session) => {
      for await (const _ of session) { /* hold */ }
    });
    const handle = await app.listen();
    const { ws } = await open(`${handle.url.replace('http', 'ws')}/hold`);
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    await handle.close();
    assert.equal(await closed, 1001);
  });
});

describe('when a WebSocket route is misconfigured', () => {
  // Checked when the router is built, after app.ready() loaded keel/ws.
  const built = async (app: App) => (await app.ready()).intoRouter();
  it('should throw ConfigError for a bad CORS record when the router is built', async () => {
    await assert.rejects(() => built(new App().ws('/x', () => {}, { cors: { allowed_origins: 'https://a.example' } })), ConfigError);
  });
  it('should throw for a maxPayload that is not a positive integer', async () => {
    for (const bad of [0, -1, 1.5]) await assert.rejects(() => built(new App().ws('/x', () => {}, { maxPayload: bad })), TypeError, String(bad));
  });
});

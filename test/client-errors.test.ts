import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createApp, type ServerHandle } from '../lib/index.js';

/** Send raw bytes, optionally half-close, and collect everything the server answers. */
function raw(port: number, data: string, halfClose = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(data);
      if (halfClose) socket.end();
    });
    let out = '';
    socket.on('data', (c) => (out += c.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
  });
}

function parse(answer: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

describe('when a request cannot be parsed as HTTP', () => {
  let server: ServerHandle;
  before(async () => {
    server = await createApp({ port: 0 }, (app) => app.post('/data', (d) => d.body)).listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should answer a body shorter than its Content-Length with a 400 content-length-mismatch problem', async () => {
    const answer = parse(await raw(server.port, 'POST /data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"value":"short"}', true));
    assert.equal(answer.status, 400);
    assert.match(answer.headers, /content-type: application\/problem\+json/);
    assert.equal(answer.body.type, 'https://keel.dev/errors/content-length-mismatch');
    assert.equal(answer.body.title, 'Content-Length header mismatch');
  });

  it('should answer oversized header fields with a 431 problem', async () => {
    const answer = parse(await raw(server.port, `GET /data HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(answer.status, 431);
    assert.equal(answer.body.status, 431);
    assert.match(answer.headers, /connection: close/);
  });

  it('should answer a garbage request line with a 400 problem', async () => {
    const answer = parse(await raw(server.port, 'NOT HTTP AT ALL\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.type, 'https://keel.dev/errors/bad-request');
  });
});

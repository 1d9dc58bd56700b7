/**
 * Attack replays against GraphQL (issue 13), over real sockets, on the example server (`npm start`)
 * in a child process: the attacks that once blocked the event loop for minutes must fail this test
 * at its 2 s deadline rather than freeze the test runner with them.
 *
 * Timing is not what is tested: each answer must be the right refusal, and the deadline (2 s) is
 * generous by orders of magnitude (the ~1 KB fan-out was refused in about 5 ms once fragment costs
 * were memoised; before, it blocked the server for about 6 minutes).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type WebSocket from 'ws';
import { spawnFixture, type Fixture } from '../helpers/spawn-fixture.js';
import { connectGraphqlWs, sendFrame, waitForFrame } from '../helpers/graphql-ws-client.js';

/** Fragments that each spread the previous one `width` times: width^levels fields once expanded. */
export function fanOutQuery(levels: number, width = 10): string {
  const parts = ['fragment F0 on Query { hello }'];
  for (let i = 1; i <= levels; i++) parts.push(`fragment F${i} on Query { ${Array(width).fill(`...F${i - 1}`).join(' ')} }`);
  return `{ ...F${levels} } ${parts.join(' ')}`;
}

const DEADLINE_MS = 2000;
let fixture: Fixture | undefined;
let base: string;

before(async () => {
  fixture = await spawnFixture(fileURLToPath(new URL('../../examples/server.ts', import.meta.url)), {
    env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
    ready: /keel example server on (http:\/\/\S+)/,
  });
  base = fixture.ready[1]!;
});
after(() => fixture?.kill());

async function post(query: string): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  return { status: res.status, body: await res.json() as never };
}

/** `promise`, or a rejection once DEADLINE_MS have passed. */
function withinDeadline<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function overWebSocket(query: string): Promise<{ type: string; payload?: unknown }> {
  let ws: WebSocket | undefined;
  try {
    return await withinDeadline((async () => {
      ws = await connectGraphqlWs(`${base.replace('http', 'ws')}/graphql`);
      sendFrame(ws, { id: 'attack', type: 'subscribe', payload: { query } });
      return waitForFrame(ws, (m) => m.id === 'attack');
    })());
  } finally {
    ws?.terminate();
  }
}

async function healthy(): Promise<void> {
  const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(DEADLINE_MS) });
  assert.equal(res.status, 200);
}

describe('when a query fans fragments out (each spreads the previous one ten times)', () => {
  // 635 bytes blocked the server 3 s; ~1 KB about 6 minutes; 3.7 KB is 10^40 fields.
  for (const levels of [7, 11, 40]) {
    const query = fanOutQuery(levels);
    it(`should refuse ${query.length} bytes (10^${levels} fields) over HTTP with the expanded complexity`, async () => {
      const { status, body } = await post(query);
      assert.equal(status, 400);
      assert.equal(body.data, undefined);
      // The complexity error, and the response-size estimate's (the same expansion, in bytes: issue 26 item 2).
      assert.deepEqual(body.errors?.map((e) => e.extensions?.code), ['COMPLEXITY_LIMIT_EXCEEDED', 'RESPONSE_SIZE_LIMIT_EXCEEDED']);
      const { code, complexity, limit } = body.errors![0]!.extensions!;
      assert.deepEqual({ code, limit }, { code: 'COMPLEXITY_LIMIT_EXCEEDED', limit: 500 });
      // Every expanded field counted (saturating at 2^53 - 1), not each fragment's own few.
      assert.equal(complexity, Math.min(10 ** levels, Number.MAX_SAFE_INTEGER));
      await healthy();
    });
    it(`should refuse ${query.length} bytes (10^${levels} fields) over WebSocket with an error frame`, async () => {
      const frame = await overWebSocket(query);
      assert.equal(frame.type, 'error');
      assert.match(JSON.stringify(frame.payload), /COMPLEXITY_LIMIT_EXCEEDED/);
      await healthy();
    });
  }
  it('should refuse the fan-out as a subscription too', async () => {
    const query = fanOutQuery(11).replace('{ ...F11 }', 'subscription { ...S } fragment S on Subscription { bookAdded { ...B10 } }')
      .replaceAll('on Query { hello }', 'on Book { id }').replaceAll(' on Query ', ' on Book ').replace(/fragment F(\d+)/g, 'fragment B$1').replace(/\.\.\.F(\d+)/g, '...B$1');
    const frame = await overWebSocket(query);
    assert.equal(frame.type, 'error');
    assert.match(JSON.stringify(frame.payload), /COMPLEXITY_LIMIT_EXCEEDED/);
  });
});

describe('when a query is huge or absurdly nested', () => {
  it('should refuse more than 5,000 tokens (a 900 KB query of one field repeated) before validating it', async () => {
    const { status, body } = await post(`{ ${'hello '.repeat(150_000)}}`);
    assert.equal(status, 400);
    assert.deepEqual(body.errors?.[0]?.extensions, { code: 'TOKEN_LIMIT_EXCEEDED', limit: 5000 });
    await healthy();
  });
  it('should answer a syntax error, not a stack overflow, for 3,000 nested selections', async () => {
    const { status, body } = await post(`{ ${'books { author { '.repeat(1500)}id${' } }'.repeat(1500)} }`);
    assert.equal(status, 400);
    assert.deepEqual(body.errors?.map((e) => e.message), ['Syntax Error: Document is nested too deeply. Parsing aborted.']);
    await healthy();
  });
  it('should refuse a deep query by depth, with no resolver run', async () => {
    const { status, body } = await post(`{ ${'books { author { '.repeat(20)}id${' } }'.repeat(20)} }`);
    assert.equal(status, 400);
    assert.equal(body.errors?.[0]?.extensions?.code, 'DEPTH_LIMIT_EXCEEDED');
  });
});

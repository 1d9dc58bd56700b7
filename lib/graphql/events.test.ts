import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createApp, MemoryPubSub, type ServerHandle } from '../index.js';
import { connectGraphqlWs, sendFrame, waitForFrame } from '../../test/helpers/graphql-ws-client.js';

const silent = pino({ level: 'silent' });
const SDL = 'type Query { hello: String } type Tick { n: Int, label: String } type Subscription { ticks: Tick }';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('when an App serves GraphQL subscriptions from its pub/sub', () => {
  let handle: ServerHandle;
  let ws: string;
  const pubsub = new MemoryPubSub();
  let publish: (topic: string, payload: unknown) => Promise<void>;
  before(async () => {
    const app = createApp({ port: 0, host: '127.0.0.1' }, (a) => {
      a.registerGraphqlSdlRoute('/live', 'POST', SDL, { hello: 'hi', ticks: { n: 0 } }, { introspection_enabled: true, field_errors: [{ path: 'ticks.label', message: 'no labels' }] }, { subscriptionEvents: true });
      a.registerGraphqlSdlRoute('/static', 'POST', SDL, { hello: 'hi', ticks: { n: 7 } }, { introspection_enabled: true });
      a.registerGraphqlRoute('/g1', 'POST', 'full');
      a.registerGraphqlRoute('/g2', 'POST', 'full');
    }, { logger: silent, pubsub });
    publish = (t, p) => app.publish(t, p);
    handle = await app.listen({ handleSignals: false });
    ws = handle.url.replace('http', 'ws');
  });
  after(() => handle.close());

  it('should stream what is published on graphql:<path>:<field> to an SDL route with subscriptionEvents, field errors included', async () => {
    const socket = await connectGraphqlWs(`${ws}/live`);
    sendFrame(socket, { id: '1', type: 'subscribe', payload: { query: 'subscription { ticks { n label } }' } });
    await until(() => pubsub.listenerCount('graphql:/live:ticks') === 1);
    const first = waitForFrame(socket, (m) => m.type === 'next');
    await publish('graphql:/live:ticks', { n: 1, label: 'x' });
    const frame = (await first).payload as { data: unknown; errors: { message: string; path: string[] }[] };
    assert.deepEqual(frame.data, { ticks: { n: 1, label: null } });
    assert.deepEqual(frame.errors.map((e) => [e.message, e.path]), [['no labels', ['ticks', 'label']]]);
    sendFrame(socket, { id: '1', type: 'complete' });
    await until(() => pubsub.listenerCount('graphql:/live:ticks') === 0);
    assert.equal(pubsub.listenerCount('graphql:/live:ticks'), 0);
    socket.close();
  });

  it('should keep the spec default on other SDL routes: response_data once, then complete', async () => {
    const socket = await connectGraphqlWs(`${ws}/static`);
    // Both frames may arrive in one read: listen for both first.
    const next = waitForFrame(socket, (m) => m.type === 'next');
    const complete = waitForFrame(socket, (m) => m.type === 'complete');
    sendFrame(socket, { id: '1', type: 'subscribe', payload: { query: 'subscription { ticks { n } }' } });
    assert.deepEqual((await next).payload, { data: { ticks: { n: 7 } } });
    await complete;
    socket.close();
  });

  it('should keep two built-in routes apart on one pub/sub', async () => {
    const socket = await connectGraphqlWs(`${ws}/g2`);
    sendFrame(socket, { id: '1', type: 'subscribe', payload: { query: 'subscription { bookAdded { title } }' } });
    await until(() => pubsub.listenerCount('graphql:/g2:bookAdded') === 1);
    const next = waitForFrame(socket, (m) => m.type === 'next');
    const add = (path: string, title: string) => fetch(`${handle.url}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation { addBook(input: {title: "${title}", authorId: "a1"}) { id } }` }),
    });
    assert.equal((await add('/g1', 'Not for g2')).status, 200);
    assert.equal((await add('/g2', 'For g2')).status, 200);
    assert.deepEqual((await next).payload, { data: { bookAdded: { title: 'For g2' } } });
    socket.close();
  });

  it('should refuse a subscriptionEvents that is not a boolean when the router is built', async () => {
    const app = createApp({}, (a) => a.registerGraphqlSdlRoute('/x', 'POST', SDL, {}, { introspection_enabled: true }, { subscriptionEvents: 'yes' as never }), { logger: silent });
    await app.ready();
    assert.throws(() => app.intoRouter(), /subscriptionEvents must be true or false/);
  });
});

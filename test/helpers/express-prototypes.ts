/**
 * Differential testing of keel/express's request and response prototypes against Express itself: the same app
 * is built twice on real Express (4 or 5), once as shipped and once with keel's prototypes in the chain
 * (`app.request` / `app.response` inherit keel's instead of Express's), and each exchange must answer the same
 * status, headers (but Date) and body on both.
 *
 * @example
 * await assertSameAsExpress(5, (app) => app.get('/', (req, res) => res.send('hi')), [{ path: '/' }]);
 */
import './quiet-express-deprecations.js';
import assert from 'node:assert/strict';
import request from 'supertest';
import { EXPRESS_VERSIONS } from './express-versions.js';
import { createRequestPrototype } from '../../express/request.js';
import { createRequestPrototype4 } from '../../express/express4/request.js';
import { createResponsePrototype } from '../../express/response.js';
import { createResponsePrototype4 } from '../../express/express4/response.js';

export interface Exchange {
  method?: 'get' | 'head' | 'post' | 'put' | 'delete' | 'options';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** An express() that builds apps whose request/response prototypes are keel's for `major`. */
export function expressWithKeelPrototypes(major: 4 | 5): () => any {
  const express = EXPRESS_VERSIONS.find((v) => v.major === major)!.express as any;
  const req = major === 4 ? createRequestPrototype4() : createRequestPrototype();
  const res = major === 4 ? createResponsePrototype4() : createResponsePrototype();
  return () => {
    const app = express();
    Object.setPrototypeOf(app.request, req);
    Object.setPrototypeOf(app.response, res);
    return app;
  };
}

export function stockExpress(major: 4 | 5): () => any {
  const express = EXPRESS_VERSIONS.find((v) => v.major === major)!.express as any;
  return () => express();
}

/** Sends one exchange to `app` and reads the answer (headers that vary per run removed). */
export async function exchange(app: any, ex: Exchange): Promise<Answer> {
  let r = (request(app) as any)[ex.method ?? 'get'](ex.path).buffer(true).parse((res: any, done: any) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks).toString('latin1')));
  });
  // a fixed Host: supertest's default carries the ephemeral port, which differs between the two servers
  const headers0 = { Host: 'app.keel.test', ...ex.headers };
  for (const [k, v] of Object.entries(headers0)) r = r.set(k, v);
  if (ex.body !== undefined) r = r.send(ex.body);
  const res = await r;
  const headers = { ...res.headers };
  delete headers.date;
  delete headers.connection;
  delete headers['keep-alive'];
  // Set-Cookie with a computed Expires drifts by a second between the two runs
  if (Array.isArray(headers['set-cookie'])) {
    headers['set-cookie'] = headers['set-cookie'].map((c: string) => c.replace(/Expires=[^;]+(?=;|$)/, 'Expires=<t>'));
  }
  return { status: res.status, headers, body: res.body ?? '' };
}

/**
 * Builds the app with `build` on stock Express `major` and on Express with keel's prototypes, sends every
 * exchange to both, and asserts the answers are equal; returns keel's answers for further assertions.
 */
export async function assertSameAsExpress(
  major: 4 | 5,
  build: (app: any) => void,
  exchanges: Exchange[],
): Promise<Answer[]> {
  const stock = stockExpress(major)();
  const keel = expressWithKeelPrototypes(major)();
  for (const app of [stock, keel]) {
    build(app);
    // errors answered with node's own methods (Express's default handler prints stacks, whose paths differ)
    app.use((err: any, _req: any, res: any, _next: any) => {
      res.statusCode = err.status || err.statusCode || 500;
      res.setHeader('Content-Type', 'text/plain');
      res.end(`${err.name}: ${err.message}`);
    });
  }
  const answers: Answer[] = [];
  for (const ex of exchanges) {
    const expected = await exchange(stock, ex);
    const actual = await exchange(keel, ex);
    assert.deepEqual(actual, expected, `${(ex.method ?? 'get').toUpperCase()} ${ex.path} ${JSON.stringify(ex.headers ?? {})}`);
    answers.push(actual);
  }
  return answers;
}

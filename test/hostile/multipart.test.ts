/**
 * Issue 44 item 4: multipart bodies of ~20,000 tiny file parts (under a 1 MiB body cap) from one address held a CPU
 * for 21 s and `/health` p99 2.3 s: busboy ran without part, file or field limits, and a route's body parsing was not
 * charged to the client's CPU budget. Replayed over real sockets; what is asserted is the refusal (timings:
 * `npm run floods -- --only multipart`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { ServerConfig } from '../../lib/records/server.js';

const silent = { logger: pino({ level: 'silent' }) };

/** `files` file parts and `fields` fields of `size` bytes each, in one multipart body (parts as small as they come). */
export function multipartBody(files: number, fields = 0, size = 1): { body: Buffer; contentType: string } {
  const boundary = 'b';
  const value = 'x'.repeat(size);
  const chunks: string[] = [];
  for (let i = 0; i < files; i++) chunks.push(`--${boundary}\r\nContent-Disposition:form-data;name=f;filename=a\r\n\r\n${value}\r\n`);
  for (let i = 0; i < fields; i++) chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="k${i}"\r\n\r\n${value}\r\n`);
  chunks.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(chunks.join('')), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function start(config: Record<string, unknown> = {}): Promise<{ server: ServerHandle; calls: () => number }> {
  let calls = 0;
  const app = createApp({ port: 0, host: '127.0.0.1', max_body_size: 1024 * 1024, rate_limit: null, ...config }, (a) => {
    a.post('/upload', (d) => {
      calls++;
      const f = d.files.f;
      return { files: f === undefined ? 0 : Array.isArray(f) ? f.length : 1, fields: Object.keys((d.body ?? {}) as object).length };
    });
    a.post('/json', (d) => ({ keys: Object.keys(d.body as object).length }), { body: { type: 'object' } });
  }, silent);
  return { server: await app.listen({ handleSignals: false }), calls: () => calls };
}

async function send(server: ServerHandle, { body, contentType }: { body: Buffer; contentType: string }): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}/upload`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, json: await res.json() };
}

/** As many one-byte file parts as fit under a 1 MiB body with the close delimiter: about 16,000 (the issue: ~20,000). */
const TINY_PARTS = Math.floor((1024 * 1024 - 10) / multipartBody(1).body.length);

describe('when a multipart body holds ~20,000 tiny file parts under the body cap (issue 44 item 4)', () => {
  let s: Awaited<ReturnType<typeof start>>;
  before(async () => (s = await start()));
  after(() => s.server.close());

  it('should refuse it with a 413 problem naming multipart_max_parts, without running the handler', async () => {
    const attack = multipartBody(TINY_PARTS);
    assert.ok(attack.body.length < 1024 * 1024, `${attack.body.length} bytes`);
    const r = await send(s.server, attack);
    assert.equal(r.status, 413);
    assert.equal(r.json.setting, 'multipart_max_parts');
    assert.equal(r.json.limit, 1000);
    assert.match(r.json.detail, /more parts than multipart_max_parts allows \(1000\)/);
    assert.equal(s.calls(), 0);
  });

  it('should refuse the 101st file part (multipart_max_files) and the 1001st field (multipart_max_fields)', async () => {
    const files = await send(s.server, multipartBody(101));
    assert.equal(files.status, 413);
    assert.equal(files.json.setting, 'multipart_max_files');
    const fields = await send(s.server, multipartBody(0, 1000 + 1));
    assert.equal(fields.status, 413);
    assert.ok(['multipart_max_fields', 'multipart_max_parts'].includes(fields.json.setting), fields.json.setting);
    const onlyFields = await send(s.server, multipartBody(0, 1000));
    assert.equal(onlyFields.status, 200);
  });

  it('should accept bodies at the defaults', async () => {
    const r = await send(s.server, multipartBody(100, 900));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json, { files: 100, fields: 900 });
  });
});

describe('when the multipart limits are set', () => {
  let s: Awaited<ReturnType<typeof start>>;
  before(async () => (s = await start({ multipart_max_parts: 10, multipart_max_files: 3, multipart_max_fields: 5, multipart_max_field_size: 100 })));
  after(() => s.server.close());

  it('should apply each one', async () => {
    assert.equal((await send(s.server, multipartBody(3, 5))).status, 200);
    assert.equal((await send(s.server, multipartBody(6, 5))).json.setting, 'multipart_max_parts');
    assert.equal((await send(s.server, multipartBody(4))).json.setting, 'multipart_max_files');
    assert.equal((await send(s.server, multipartBody(0, 6))).json.setting, 'multipart_max_fields');
  });

  it('should refuse a field value past multipart_max_field_size instead of truncating it', async () => {
    assert.equal((await send(s.server, multipartBody(0, 1, 100))).status, 200);
    const r = await send(s.server, multipartBody(0, 1, 101));
    assert.equal(r.status, 413);
    assert.equal(r.json.setting, 'multipart_max_field_size');
    assert.equal(r.json.limit, 100);
  });
});

describe('when the multipart limits are null', () => {
  it('should parse ~20,000 parts', async () => {
    const s = await start({ multipart_max_parts: null, multipart_max_files: null });
    try {
      const r = await send(s.server, multipartBody(TINY_PARTS));
      assert.deepEqual(r.json, { files: TINY_PARTS, fields: 0 });
    } finally {
      await s.server.close();
    }
  });
});

describe('when a multipart limit is invalid', () => {
  for (const [key, value] of [['multipart_max_parts', 0], ['multipart_max_files', -1], ['multipart_max_fields', 1.5], ['multipart_max_field_size', '1mb']] as const) {
    it(`should refuse ${key}: ${JSON.stringify(value)} naming the key`, () => {
      assert.throws(() => ServerConfig.parse({ [key]: value }), (e: Error) => e.message.includes(key) && e.message.includes('ServerConfig'));
    });
  }
});

describe('when one client sends bodies that take long to parse', () => {
  it('should charge the parsing to its CPU budget: 429 cpu-budget-exceeded once it is spent, another client served', async () => {
    const s = await start({ trust_proxy: 'loopback', work_limits: { cpu_ms_per_second: 1, cpu_ms_burst: 1 }, multipart_max_parts: null, multipart_max_files: null });
    try {
      const attack = multipartBody(5000);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${s.server.url}/upload`, { method: 'POST', headers: { 'content-type': attack.contentType, 'x-forwarded-for': '203.0.113.9' }, body: attack.body });
        statuses.push(res.status);
        const json = await res.json() as { type?: string };
        if (res.status === 429) {
          assert.match(String(json.type), /cpu-budget-exceeded/);
          assert.ok(res.headers.get('retry-after'));
        }
      }
      assert.ok(statuses.includes(429), `statuses ${statuses.join(' ')}`);
      assert.equal(statuses[0], 200);
      // JSON bodies are charged the same way; another client has its own budget.
      const json = await fetch(`${s.server.url}/json`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' }, body: JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))) });
      assert.equal(json.status, 429);
      await json.arrayBuffer();
      const other = await send(s.server, multipartBody(3));
      assert.equal(other.status, 200);
    } finally {
      await s.server.close();
    }
  });
});

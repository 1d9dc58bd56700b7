/**
 * multipart/form-data uploads through real sockets: files and fields, UploadFile's operations
 * (asBytes, readToString, contentTypeOrDefault) and the 400 / 413 failures.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { App } from '../lib/app/app.js';
import { UploadFile } from '../lib/http/multipart.js';
import type { ServerHandle } from '../lib/server/server.js';

const INVALID_UTF8 = Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x6f]);

function describeFile(f: UploadFile) {
  let text: string | null = null;
  let textError: string | null = null;
  try {
    text = f.readToString();
  } catch (err) {
    textError = `${(err as Error).name}: ${(err as Error).message}`;
  }
  return { filename: f.filename, size: f.size, bytes: [...f.asBytes()], contentType: f.contentType, typeOrDefault: f.contentTypeOrDefault(), text, textError };
}

let handle: ServerHandle;
before(async () => {
  const app = new App({ port: 0, max_body_size: 4096 });
  app.post('/upload', (d) => {
    const files: Record<string, unknown> = {};
    for (const [name, f] of Object.entries(d.files)) files[name] = Array.isArray(f) ? f.map(describeFile) : describeFile(f);
    return { fields: d.body ?? null, files };
  });
  app.post('/documents', (d) => ({ received: Object.keys(d.files) }), { parameters: { files: { document: { required: true } } } });
  handle = await app.listen({ handleSignals: false });
});
after(() => handle.close());

async function post(body: FormData | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${handle.url}/upload`, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), json: JSON.parse(text) };
}

/** A multipart body written by hand, part by part (RFC 7578). */
function multipart(boundary: string, parts: Array<{ headers: string[]; content: string | Buffer }>): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${p.headers.join('\r\n')}\r\n\r\n`, 'latin1'));
    chunks.push(Buffer.isBuffer(p.content) ? p.content : Buffer.from(p.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe('when files and fields are uploaded with FormData', () => {
  it('should give the handler each file and each field', async () => {
    const form = new FormData();
    form.append('title', 'Holiday');
    form.append('tags', 'a');
    form.append('tags', 'b');
    form.append('doc', new Blob(['héllo wörld'], { type: 'text/plain' }), 'notes.txt');
    form.append('image', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'pic.png');
    const { status, json } = await post(form);
    assert.equal(status, 200);
    assert.deepEqual(json.fields, { title: 'Holiday', tags: ['a', 'b'] });
    assert.equal(json.files.doc.filename, 'notes.txt');
    assert.equal(json.files.doc.text, 'héllo wörld');
    assert.equal(json.files.doc.size, Buffer.byteLength('héllo wörld'));
    assert.equal(json.files.doc.typeOrDefault, 'text/plain');
    assert.deepEqual(json.files.image.bytes, [0x89, 0x50, 0x4e, 0x47]);
    assert.equal(json.files.image.typeOrDefault, 'image/png');
  });

  it('should give a list when one field carries several files', async () => {
    const form = new FormData();
    form.append('files', new Blob(['one']), 'a.txt');
    form.append('files', new Blob(['two']), 'b.txt');
    const { json } = await post(form);
    assert.deepEqual(json.files.files.map((f: { filename: string; text: string }) => [f.filename, f.text]), [['a.txt', 'one'], ['b.txt', 'two']]);
  });

  it('should accept an empty file', async () => {
    const form = new FormData();
    form.append('file', new Blob([], { type: 'text/plain' }), 'empty.txt');
    const { json } = await post(form);
    assert.equal(json.files.file.size, 0);
    assert.equal(json.files.file.text, '');
  });
});

describe('when file content is not valid UTF-8', () => {
  it('should return the exact bytes from asBytes() and an error from readToString()', async () => {
    const form = new FormData();
    form.append('bin', new Blob([INVALID_UTF8], { type: 'application/octet-stream' }), 'data.bin');
    const { status, json } = await post(form);
    assert.equal(status, 200);
    assert.deepEqual(json.files.bin.bytes, [...INVALID_UTF8]);
    assert.equal(json.files.bin.text, null);
    assert.match(json.files.bin.textError, /^TypeError: .*not valid UTF-8/);
  });
});

describe('when a multipart body is written by hand', () => {
  const boundary = 'keel-Boundary-7MA4YWxk';
  const headers = { 'Content-Type': `multipart/form-data; boundary=${boundary}` };

  it('should default a file part without Content-Type to application/octet-stream', async () => {
    const body = multipart(boundary, [
      { headers: ['Content-Disposition: form-data; name="raw"; filename="raw.dat"'], content: 'abc' },
      { headers: ['Content-Disposition: form-data; name="typed"; filename="t.txt"', 'Content-Type: text/plain'], content: 'def' },
      { headers: ['Content-Disposition: form-data; name="note"'], content: 'just a field' },
    ]);
    const { status, json } = await post(body, headers);
    assert.equal(status, 200);
    assert.equal(json.files.raw.contentType, null);
    assert.equal(json.files.raw.typeOrDefault, 'application/octet-stream');
    assert.equal(json.files.typed.typeOrDefault, 'text/plain');
    assert.deepEqual(json.fields, { note: 'just a field' });
  });

  it('should keep a quoted boundary and CRLFs inside file content', async () => {
    const body = multipart('a b', [{ headers: ['Content-Disposition: form-data; name="f"; filename="x.txt"', 'Content-Type: text/csv'], content: 'a,b\r\n1,2\r\n' }]);
    const { status, json } = await post(body, { 'Content-Type': 'multipart/form-data; boundary="a b"' });
    assert.equal(status, 200);
    assert.equal(json.files.f.text, 'a,b\r\n1,2\r\n');
    assert.equal(json.files.f.typeOrDefault, 'text/csv');
  });

  it('should answer a multipart request without a boundary with a 400 problem', async () => {
    const body = multipart(boundary, [{ headers: ['Content-Disposition: form-data; name="a"'], content: 'x' }]);
    const { status, type, json } = await post(body, { 'Content-Type': 'multipart/form-data' });
    assert.equal(status, 400);
    assert.equal(type, 'application/problem+json');
    assert.equal(json.detail, "multipart/form-data requires 'boundary' parameter");
  });

  describe('when a route takes uploads and the request declares multipart without a boundary', () => {
    const send = (headers: Record<string, string>) =>
      fetch(`${handle.url}/documents`, { method: 'POST', headers }).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), json: (await r.json()) as { detail: string; errors: Array<{ loc: unknown[] }> } }));
    it('should answer 400 even when no body follows (not a 422 for the missing file)', async () => {
      const { status, type, json } = await send({ 'Content-Type': 'multipart/form-data' });
      assert.equal(status, 400);
      assert.equal(type, 'application/problem+json');
      assert.equal(json.detail, "multipart/form-data requires 'boundary' parameter");
    });
    it('should treat an empty boundary parameter as none', async () => {
      assert.equal((await send({ 'Content-Type': 'multipart/form-data; boundary=' })).status, 400);
    });
    it('should still report the missing file for a well-formed multipart type without a body', async () => {
      const { status, json } = await send({ 'Content-Type': 'multipart/form-data; boundary=x' });
      assert.equal(status, 422);
      assert.deepEqual(json.errors[0].loc, ['files', 'document']);
    });
  });

  it('should answer a truncated multipart body with a 400 problem', async () => {
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"; filename="a.txt"\r\n\r\nunterminated`);
    const { status, type } = await post(body, headers);
    assert.equal(status, 400);
    assert.equal(type, 'application/problem+json');
  });

  it('should answer a multipart body over max_body_size with a 413 problem', async () => {
    const body = multipart(boundary, [{ headers: ['Content-Disposition: form-data; name="f"; filename="big.bin"'], content: Buffer.alloc(5000) }]);
    const { status, type } = await post(body, headers);
    assert.equal(status, 413);
    assert.equal(type, 'application/problem+json');
  });
});

describe('when an UploadFile is built directly', () => {
  it('should default a missing content type to application/octet-stream', () => {
    assert.equal(new UploadFile('a', null, Buffer.from('x')).contentTypeOrDefault(), 'application/octet-stream');
    assert.equal(new UploadFile('a', '', Buffer.from('x')).contentTypeOrDefault(), 'application/octet-stream');
    assert.equal(new UploadFile('a', 'image/gif', Buffer.from('x')).contentTypeOrDefault(), 'image/gif');
  });

  it('should serialise without its bytes', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(new UploadFile('a.txt', null, Buffer.from('xyz')))), { filename: 'a.txt', content_type: 'application/octet-stream', size: 3 });
  });

  it('should reject invalid UTF-8 and accept valid multi-byte text', () => {
    assert.throws(() => new UploadFile('a', null, INVALID_UTF8).readToString(), TypeError);
    assert.equal(new UploadFile('a', null, Buffer.from('ünïcødé ✓')).readToString(), 'ünïcødé ✓');
  });
});

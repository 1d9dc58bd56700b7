/**
 * The request builder against an echo server, over every runnable case of the shared corpus: the
 * request the harness sends must be the one the case describes (method, path, query, headers,
 * cookies, body), each query parameter once, plus the case-id header. Skips visibly without the corpus.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import busboy from 'busboy';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { expandTemplates, formFromBody } from './client.js';
import { loadCases } from './loader.js';
import { CASE_HEADER, runCases } from './runner.js';
import { isRunnable, type CaseFile, type CaseRequest, type ConformanceCase } from './types.js';

interface Echo {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
  parts?: { fields: Array<[string, string]>; files: Array<{ field: string; filename: string | undefined; type: string; data: Buffer }> };
}

const received = new Map<string, Echo[]>();
let server: Server;
let base: string;

function readMultipart(req: IncomingMessage, body: Buffer): Promise<Echo['parts']> {
  return new Promise((resolve) => {
    const parts: NonNullable<Echo['parts']> = { fields: [], files: [] };
    let bb;
    try {
      bb = busboy({ headers: req.headers, preservePath: true });
    } catch {
      resolve(undefined);
      return;
    }
    bb.on('field', (name, value) => parts.fields.push([name, value]));
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('end', () => parts.files.push({ field, filename: info.filename, type: info.mimeType, data: Buffer.concat(chunks) }));
    });
    bb.on('close', () => resolve(parts));
    bb.on('error', () => resolve(undefined));
    bb.end(body);
  });
}

before(async () => {
  server = createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    const record = async () => {
      const body = Buffer.concat(chunks);
      const id = String(req.headers[CASE_HEADER.toLowerCase()] ?? '');
      const echo: Echo = { method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body };
      if (/^multipart\/form-data;.*boundary=/i.test(String(req.headers['content-type'] ?? ''))) echo.parts = await readMultipart(req, body);
      received.set(id, [...(received.get(id) ?? []), echo]);
      if (!res.headersSent && !res.destroyed) res.end('{}');
    };
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => void record());
    // A case that declares more Content-Length than it sends: keep what arrived.
    req.on('aborted', () => void record());
    req.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const scalar = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const flat = (record: Record<string, unknown>) => Object.entries(record).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, scalar(x)] as [string, string]));
const sorted = (pairs: Array<[string, string]>) => [...pairs].sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));

/** The query the case describes: the path's own query, the raw query_string, and query_params not already in the path. */
function describedQuery(req: CaseRequest): Array<[string, string]> {
  const q = req.path.indexOf('?');
  const inPath = q < 0 ? [] : [...new URLSearchParams(req.path.slice(q + 1))];
  if (typeof req.query_string === 'string' && req.query_string !== '') return [...inPath, ...new URLSearchParams(req.query_string.replace(/^\?/, ''))];
  const names = new Set(inPath.map(([k]) => k));
  return [...inPath, ...flat(req.query_params ?? {}).filter(([k]) => !names.has(k))];
}

function headerValues(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i] === name) out.push(raw[i + 1]!);
  return out;
}

function fileBytes(f: CaseFile): Buffer {
  if (typeof f.magic_bytes === 'string') return Buffer.from(f.magic_bytes, 'hex');
  return Buffer.from(f.content ?? '', f.content_encoding === 'base64' ? 'base64' : 'utf8');
}

/** Compare one echoed request with its case; returns the differences. */
function differences(c: ConformanceCase, echo: Echo): string[] {
  const req = expandTemplates(c.request);
  const out: string[] = [];
  const check = (what: string, actual: unknown, expected: unknown) => {
    try {
      assert.deepEqual(actual, expected);
    } catch {
      out.push(`${what}: sent ${JSON.stringify(actual)?.slice(0, 200)}, case says ${JSON.stringify(expected)?.slice(0, 200)}`);
    }
  };
  check('method', echo.method, (req.method ?? c.handler.method).toUpperCase());
  const q = echo.url.indexOf('?');
  check('path', q < 0 ? echo.url : echo.url.slice(0, q), req.path.split('?', 1)[0]);
  check('query', sorted(q < 0 ? [] : [...new URLSearchParams(echo.url.slice(q + 1))]), sorted(describedQuery(req)));
  // Each query_params value is what the query carries, once (a query in the path is not repeated).
  if (req.query_params && req.query_string === undefined) {
    const sent = new URLSearchParams(q < 0 ? '' : echo.url.slice(q + 1));
    for (const [k, v] of Object.entries(req.query_params)) check(`query ${k}`, sent.getAll(k), (Array.isArray(v) ? v : [v]).map(scalar));
  }
  // A JSON object under a boundary-less multipart type describes a form: it goes out as multipart,
  // its Content-Type completed with the boundary.
  const boundaryless = (t: unknown) => typeof t === 'string' && /^multipart\/form-data\s*(;|$)/i.test(t) && !/;\s*boundary=/i.test(t);
  const declaredType = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  const described = req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body) && (boundaryless(declaredType) || boundaryless(req.content_type))
    ? formFromBody(req.body as Record<string, unknown>)
    : undefined;
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    if (described && k.toLowerCase() === 'content-type') check(`header ${k}`, headerValues(echo.rawHeaders, k).map((h) => /^multipart\/form-data; boundary=\S+$/.test(h)), [true]);
    else check(`header ${k}`, headerValues(echo.rawHeaders, k), [scalar(v)]);
  }
  check(`header ${CASE_HEADER}`, headerValues(echo.rawHeaders, CASE_HEADER), [c.id]);
  if (req.cookies && Object.keys(req.cookies).length) {
    const cookie = headerValues(echo.rawHeaders, 'Cookie').join('; ');
    check('cookies', Object.fromEntries(cookie.split('; ').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])), Object.fromEntries(Object.entries(req.cookies).map(([k, v]) => [k, scalar(v)])));
  }
  // A case may declare a Content-Length other than its body's (truncated uploads): the body sent is
  // the case's, cut to what was declared.
  const declaredLength = Number(Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-length')?.[1]);
  const bodyBytes = echo.body;
  const checkMultipart = (fields: Record<string, unknown>, files: readonly CaseFile[]) => {
    const parts = echo.parts;
    if (!parts) return void out.push('body: not multipart/form-data with a boundary');
    // A file part without a filename is, to a multipart parser, a field (RFC 7578 §4.2).
    const unnamed = files.filter((f) => f.filename == null).map((f) => [f.field_name, fileBytes(f).toString('utf8')] as [string, string]);
    check('multipart fields', sorted(parts.fields), sorted([...flat(fields), ...unnamed]));
    const named = files.filter((f) => f.filename != null);
    const want = named.map((f) => ({ field: f.field_name, filename: f.filename ?? undefined, data: fileBytes(f).toString('base64'), ...(f.content_type ? { type: f.content_type } : {}) }));
    const got = parts.files.map((f, i) => ({ field: f.field, filename: f.filename, data: f.data.toString('base64'), ...(named[i]?.content_type ? { type: f.type } : {}) }));
    check('multipart files', got, want);
  };
  if (described) checkMultipart(described.data, described.files);
  else if (req.body !== undefined) {
    if (typeof req.body === 'string') check('body', bodyBytes.toString('utf8'), Number.isFinite(declaredLength) ? req.body.slice(0, declaredLength) : req.body);
    else check('body', JSON.parse(bodyBytes.toString('utf8')), req.body);
  } else if (Array.isArray(req.files) || req.data !== undefined || /^multipart\/form-data/i.test(req.content_type ?? '')) {
    checkMultipart({ ...(req.form_data ?? {}), ...(req.data ?? {}) }, req.files ?? []);
  } else if (req.form_data !== undefined) {
    check('form body', sorted([...new URLSearchParams(echo.body.toString('utf8'))]), sorted(flat(req.form_data)));
  } else check('body', echo.body.length, 0);
  return out;
}

const present = existsSync(SHARED_CORPUS);
describe('the request builder, over the shared corpus', { skip: present ? false : `shared corpus not found at ${SHARED_CORPUS}: skipped` }, () => {
  it('should send every case as the case describes it (method, path, query once, headers, cookies, body)', async () => {
    const cases = loadCases([join(SHARED_CORPUS, 'testing_data'), join(SHARED_CORPUS, 'fixtures')]).filter(isRunnable) as ConformanceCase[];
    assert.ok(cases.length > 500, `only ${cases.length} runnable cases loaded`);
    const report = await runCases(cases, { target: base, timeoutMs: 5000 });
    const problems: string[] = [];
    for (const c of cases) {
      const echoes = received.get(c.id);
      const r = report.results.find((x) => x.id === c.id)!;
      if (!echoes?.length) {
        problems.push(`${c.id}: no request arrived${r.error ? ` (${r.error})` : ''}`);
        continue;
      }
      for (const d of differences(c, echoes.at(-1)!)) problems.push(`${c.id}: ${d}`);
    }
    assert.deepEqual(problems, []);
  });
});

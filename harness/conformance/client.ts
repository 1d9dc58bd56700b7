/**
 * Turning a case's request into bytes on the wire, with node:http (not fetch): the corpus needs
 * methods, header casings and bodies that fetch normalises away, and raw response bytes so content
 * codings are checked by our own decoder.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { snapshotFromParts, snapshotResponse, type ResponseSnapshot } from '../snapshot.js';
import type { CaseFile, CaseRequest } from './types.js';

/**
 * Default per-request budget (`--timeout`), milliseconds: the whole answer, head and body, must have
 * arrived by then. A hung server fails the case instead of hanging the run.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** No complete answer within the per-request budget (the server is slow, hung or stopped). */
export class NoResponseError extends Error {
  override name = 'NoResponse';
}

export interface WireRequest {
  method: string;
  /** Path plus query string. */
  path: string;
  headers: Array<[string, string]>;
  body?: Buffer;
}

/** Largest expansion of a `{{ repeat … }}` template we build, bytes. */
const MAX_TEMPLATE_EXPANSION = 16 * 1024 * 1024;
const REPEAT = /^\{\{\s*repeat\s+'(.)'\s+(\d+)\s+times\s*\}\}$/su;

/**
 * The corpus writes large values as `{{ repeat 'x' 2000 times }}` (for 413/431 cases); a string that
 * is exactly such a template becomes the repeated text. Nothing else is a template.
 */
export function expandTemplates<T>(value: T): T {
  if (typeof value === 'string') {
    const m = REPEAT.exec(value);
    if (!m) return value;
    const n = Number(m[2]);
    if (n > MAX_TEMPLATE_EXPANSION) throw new Error(`template ${value} expands beyond ${MAX_TEMPLATE_EXPANSION} characters`);
    return m[1]!.repeat(n) as T;
  }
  if (Array.isArray(value)) return value.map((v) => expandTemplates(v)) as T;
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandTemplates(v)])) as T;
  }
  return value;
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** `a=1&a=2` for arrays (the form every framework in the corpus reads as a list). */
function appendParams(params: URLSearchParams, record: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(record)) {
    if (Array.isArray(v)) for (const item of v) params.append(k, scalar(item));
    else params.append(k, scalar(v));
  }
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  const lower = name.toLowerCase();
  return headers.some(([k]) => k.toLowerCase() === lower);
}

function fileBytes(f: CaseFile): Buffer {
  if (typeof f.magic_bytes === 'string') return Buffer.from(f.magic_bytes, 'hex');
  const content = f.content ?? '';
  return f.content_encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
}

/** Quote a Content-Disposition parameter value (RFC 7578 §4.2: quoted-string, `"` and CR/LF escaped). */
function quote(v: string): string {
  return `"${v.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;
}

/**
 * multipart/form-data (RFC 7578) by hand: the corpus sets per-part headers, which FormData cannot.
 * Fields first, then files, each in the case's order.
 */
export function buildMultipart(data: Record<string, unknown>, files: readonly CaseFile[], boundary = `keel-${randomBytes(12).toString('hex')}`): { body: Buffer; contentType: string } {
  const parts: Buffer[] = [];
  const push = (headers: string[], content: Buffer) => {
    parts.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`), content, Buffer.from('\r\n'));
  };
  for (const [name, value] of Object.entries(data)) {
    for (const item of Array.isArray(value) ? value : [value]) push([`Content-Disposition: form-data; name=${quote(name)}`], Buffer.from(scalar(item)));
  }
  for (const f of files) {
    const disposition = `Content-Disposition: form-data; name=${quote(f.field_name)}${f.filename != null ? `; filename=${quote(f.filename)}` : ''}`;
    const headers = [disposition];
    if (f.content_type) headers.push(`Content-Type: ${f.content_type}`);
    for (const [k, v] of Object.entries(f.headers ?? {})) headers.push(`${k}: ${v}`);
    push(headers, fileBytes(f));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A file as a case's JSON body describes one: an object with `filename` or `content` (upload cases). */
function isFileObject(v: unknown): v is { filename?: string | null; content?: string; content_type?: string | null; content_encoding?: string } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && ('filename' in v || 'content' in v);
}

/**
 * A JSON body sent under a multipart/form-data Content-Type is a description of the form, not JSON
 * (the upload cases write `{file: {filename, content}, description: '…'}` with a bare
 * `Content-Type: multipart/form-data`, as a client library's `files=` argument would take it).
 * File objects (and arrays of them) become file parts, everything else fields; a `content_encoding`
 * other than base64 (e.g. gzip) is the part's Content-Encoding and its content is sent as written.
 */
export function formFromBody(body: Record<string, unknown>): { data: Record<string, unknown>; files: CaseFile[] } {
  const data: Record<string, unknown> = {};
  const files: CaseFile[] = [];
  for (const [name, value] of Object.entries(body)) {
    const items = Array.isArray(value) ? value : [value];
    if (items.length === 0 || !items.every(isFileObject)) {
      data[name] = value;
      continue;
    }
    for (const f of items) {
      const encoding = f.content_encoding && f.content_encoding !== 'text' && f.content_encoding !== 'base64' ? f.content_encoding : undefined;
      files.push({
        field_name: name,
        filename: f.filename ?? null,
        content: f.content ?? '',
        ...(f.content_encoding === 'base64' ? { content_encoding: 'base64' } : {}),
        ...(f.content_type ? { content_type: f.content_type } : {}),
        ...(encoding ? { headers: { 'Content-Encoding': encoding } } : {}),
      });
    }
  }
  return { data, files };
}

/**
 * `request.path` plus the case's query, each parameter once:
 * - `query_string` is the raw form; when given it wins (`query_params` then only documents it);
 * - a query already in `request.path` is sent as written; `query_params` then describes it (the
 *   corpus repeats `?limit=10` as `{limit: 10}`), so only its names the path does not carry are added;
 * - otherwise `query_params` is encoded, arrays as repeated names (`a=1&a=2`).
 */
export function withQuery(req: Pick<CaseRequest, 'path' | 'query_params' | 'query_string'>): string {
  let path = req.path;
  const join = (q: string) => (q ? path + (path.includes('?') ? (path.endsWith('?') || path.endsWith('&') ? '' : '&') : '?') + q : path);
  if (typeof req.query_string === 'string' && req.query_string !== '') return join(req.query_string.replace(/^\?/, ''));
  if (!req.query_params || Object.keys(req.query_params).length === 0) return path;
  const inPath = new Set(new URLSearchParams(path.includes('?') ? path.slice(path.indexOf('?') + 1) : '').keys());
  const rest = Object.fromEntries(Object.entries(req.query_params).filter(([k]) => !inPath.has(k)));
  const query = new URLSearchParams();
  appendParams(query, rest);
  return join(query.toString());
}

const NEGATIVE_ZERO = '\u0000keel-negative-zero\u0000';

/** JSON.stringify, except that -0 stays `-0` (the corpus sends it on purpose; JSON.stringify writes 0). */
export function jsonText(value: unknown): string {
  let seen = false;
  const text = JSON.stringify(value, (_k, v: unknown) => (Object.is(v, -0) ? ((seen = true), NEGATIVE_ZERO) : v));
  return seen ? text.replaceAll(JSON.stringify(NEGATIVE_ZERO), '-0') : text;
}

/** The wire form of a case request. */
export function buildRequest(input: CaseRequest): WireRequest {
  const req = expandTemplates(input);
  const method = (req.method ?? 'GET').toUpperCase();
  const path = withQuery(req);
  const headers: Array<[string, string]> = Object.entries(req.headers ?? {}).map(([k, v]) => [k, scalar(v)]);
  if (req.cookies && Object.keys(req.cookies).length > 0) {
    const cookie = Object.entries(req.cookies).map(([k, v]) => `${k}=${scalar(v)}`).join('; ');
    headers.push(['Cookie', cookie]);
  }
  let body: Buffer | undefined;
  let contentType: string | undefined;
  const declared = req.content_type;
  const isMultipart = (declared ?? '').toLowerCase().startsWith('multipart/form-data') || Array.isArray(req.files) || (req.data !== undefined && req.body === undefined);
  const headerType = headers.find(([k]) => k.toLowerCase() === 'content-type');
  const boundaryless = (t: string | undefined) => t !== undefined && /^multipart\/form-data\s*(;|$)/i.test(t) && !/;\s*boundary=/i.test(t);
  if (req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body) && (boundaryless(headerType?.[1]) || boundaryless(declared))) {
    // The boundary-less multipart header is what the case's author let the client complete.
    const form = formFromBody(req.body as Record<string, unknown>);
    const mp = buildMultipart(form.data, form.files);
    body = mp.body;
    if (headerType) headerType[1] = mp.contentType;
    else contentType = mp.contentType;
  } else if (req.body !== undefined) {
    if (typeof req.body === 'string') body = Buffer.from(req.body, 'utf8');
    else {
      body = Buffer.from(jsonText(req.body), 'utf8');
      contentType = 'application/json';
    }
    if (declared) contentType = declared;
  } else if (isMultipart && (Array.isArray(req.files) || req.data !== undefined || req.form_data !== undefined || declared)) {
    const fields = { ...(req.form_data ?? {}), ...(req.data ?? {}) };
    const mp = buildMultipart(fields, req.files ?? []);
    body = mp.body;
    contentType = mp.contentType;
  } else if (req.form_data !== undefined) {
    const form = new URLSearchParams();
    appendParams(form, req.form_data);
    body = Buffer.from(form.toString());
    contentType = declared ?? 'application/x-www-form-urlencoded';
  }
  if (body !== undefined && contentType && !hasHeader(headers, 'content-type')) headers.push(['Content-Type', contentType]);
  return { method, path, headers, ...(body !== undefined ? { body } : {}) };
}

/**
 * Send a wire request to `baseUrl` and snapshot the response (content codings removed). A 101
 * Switching Protocols is snapshotted as its status and headers with an empty body, and the upgraded
 * connection is closed.
 */
export function send(baseUrl: string | URL, wire: WireRequest, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ResponseSnapshot> {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  const headers: OutgoingHttpHeaders = {};
  // Keep the case's header casing; repeated names are sent as repeated fields.
  for (const [k, v] of wire.headers) {
    const prev = headers[k];
    headers[k] = prev === undefined ? v : ([] as string[]).concat(prev as string | string[], v);
  }
  if (wire.body !== undefined && !hasHeader(wire.headers, 'content-length') && !hasHeader(wire.headers, 'transfer-encoding')) {
    headers['Content-Length'] = String(wire.body.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: base.hostname.replace(/^\[(.*)\]$/, '$1'), port: base.port || 80, method: wire.method, path: prefix + wire.path, headers, agent: false },
      (res) => {
        snapshotResponse(res).then(resolve, reject);
      },
    );
    // node delivers a 101 Switching Protocols as 'upgrade', never as 'response'; without a listener
    // it destroys the socket and the request fails. The 101 is the answer the case asks about; what
    // follows it on the socket is another protocol, so its head is the snapshot (no body) and the
    // connection is closed.
    req.on('upgrade', (res, socket) => {
      try {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve(snapshotFromParts({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.alloc(0) }));
      } catch (err) {
        reject(err);
      } finally {
        socket.destroy();
      }
    });
    // A budget for the whole exchange, not an idle timer: a server that trickles bytes forever, or
    // sends a head and never the body, is as hung as one that sends nothing.
    const timer = setTimeout(() => {
      const err = new NoResponseError(`No response within ${timeoutMs} ms`);
      req.destroy(err);
      reject(err);
    }, timeoutMs);
    timer.unref();
    const settle = <T,>(f: (v: T) => void) => (v: T) => {
      clearTimeout(timer);
      f(v);
    };
    resolve = settle(resolve);
    reject = settle(reject);
    req.on('error', reject);
    // A case may declare more Content-Length than it sends (a truncated body). The server can only
    // notice at end of stream, so after the bytes we have we half-close our side, as a client
    // whose upload broke off would.
    const declared = Number(wire.headers.find(([k]) => k.toLowerCase() === 'content-length')?.[1]);
    if (Number.isFinite(declared) && declared > (wire.body?.length ?? 0)) req.once('finish', () => req.socket?.end());
    req.end(wire.body);
  });
}

/**
 * multipart/form-data (RFC 7578) through busboy, from an already size-capped raw body.
 */
import type busboy from 'busboy';
import { lazyRequire } from './lazy-require.js';

/** busboy, loaded by the first multipart body (lib/http/lazy-require.ts). */
const loadBusboy = lazyRequire<typeof busboy>('busboy');
import { HttpError } from './errors.js';

/** An uploaded file (spec: uploaded file value). */
export class UploadFile {
  readonly filename: string;
  readonly contentType: string | null;
  readonly size: number;
  readonly #bytes: Buffer;
  constructor(filename: string, contentType: string | null, bytes: Buffer) {
    this.filename = filename;
    this.contentType = contentType;
    this.size = bytes.length;
    this.#bytes = bytes;
  }
  /** The file's bytes. */
  asBytes(): Buffer {
    return this.#bytes;
  }
  /** The file as UTF-8 text; throws a TypeError when the bytes are not valid UTF-8. */
  readToString(): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.#bytes);
    } catch {
      throw new TypeError(`Uploaded file ${JSON.stringify(this.filename)} is not valid UTF-8`);
    }
  }
  /** The declared content type, or `application/octet-stream`. */
  contentTypeOrDefault(): string {
    return this.contentType || 'application/octet-stream';
  }
  toJSON(): { filename: string; content_type: string; size: number } {
    return { filename: this.filename, content_type: this.contentTypeOrDefault(), size: this.size };
  }
}

export interface MultipartResult {
  fields: Record<string, string | string[]>;
  files: Record<string, UploadFile | UploadFile[]>;
}

function boundaryOf(contentType: string | string[] | undefined): string {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(String(contentType ?? ''));
  return m?.[1] ?? m?.[2] ?? '';
}

/**
 * Add `value` under `key`; a key seen again becomes a list (form fields, query parameters). Keys are
 * own properties: `constructor` or `toString` is a field like any other, and `__proto__`, which would
 * replace the object's prototype, is ignored (as qs ignores it in urlencoded forms).
 */
export function appendRepeated<T>(target: Record<string, T | T[]>, key: string, value: T): void {
  const prev = target[key];
  if (prev === undefined) target[key] = value;
  else if (!Object.hasOwn(target, key)) {
    if (key !== '__proto__') target[key] = value;
  } else if (Array.isArray(prev)) prev.push(value);
  else target[key] = [prev, value];
}

/**
 * For each file part in order: did it carry its own Content-Type header? busboy reports RFC 7578
 * §4.4's `text/plain` default for a part without one, but an uploaded file with no declared type
 * is unknown content (spec: content_type_or_default() → application/octet-stream), so we look.
 */
function declaredFileTypes(raw: Buffer, boundary: string): boolean[] {
  const out: boolean[] = [];
  const delimiter = `--${boundary}`;
  let i = raw.indexOf(delimiter);
  while (i >= 0) {
    const start = i + delimiter.length;
    if (raw[start] === 0x2d && raw[start + 1] === 0x2d) break; // the close delimiter
    const end = raw.indexOf('\r\n\r\n', start);
    if (end < 0) break;
    const head = raw.toString('latin1', start, end).toLowerCase();
    const disposition = /^content-disposition:[^\r\n]*/m.exec(head)?.[0] ?? '';
    const type = /^content-type:[ \t]*([^\r\n;]*)/m.exec(head)?.[1]?.trim();
    // busboy's rule for a file part: a filename parameter, or an octet-stream type.
    if (disposition && (/;\s*filename\*?=/.test(disposition) || type === 'application/octet-stream')) out.push(type !== undefined);
    i = raw.indexOf(delimiter, end + 4);
  }
  return out;
}

/**
 * Bounds of one multipart body (ServerConfig.multipart_max_*; null = none). busboy's own fixed bounds stay:
 * a part's header section past 16 KiB or 2000 lines is a malformed body (400).
 */
export interface MultipartLimits {
  readonly parts: number | null;
  readonly files: number | null;
  readonly fields: number | null;
  readonly fieldSize: number | null;
}

/** The 413 for a multipart body past one of its bounds, naming the setting (RFC 9110 §15.5.14). */
function tooMany(what: string, setting: string, limit: number): HttpError {
  return new HttpError(413, `Multipart body has more ${what} than ${setting} allows (${limit})`, { extensions: { setting, limit } });
}

/**
 * More than `limit` parts between boundaries? Counted with indexOf over the raw bytes, stopping at limit + 1,
 * so 20,000 tiny parts are refused before busboy makes an object of any (issue 44: they held a CPU for 21 s).
 */
function partsExceed(raw: Buffer, boundary: string, limit: number): boolean {
  if (!boundary) return false;
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // Each part follows a delimiter and the close delimiter follows the last, so limit + 2 delimiters mean at least
  // limit + 1 parts. The first delimiter may open the body without its CRLF (RFC 2046 §5.1.1).
  let delimiters = raw.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? 1 : 0;
  for (let i = raw.indexOf(delimiter); i >= 0; i = raw.indexOf(delimiter, i + delimiter.length)) {
    if (++delimiters > limit + 1) return true;
  }
  return false;
}

const UNLIMITED: MultipartLimits = { parts: null, files: null, fields: null, fieldSize: null };

/**
 * Parse a multipart body. A missing boundary or a malformed body is a 400 problem; a body past one of
 * `limits` a 413 problem naming the setting (`extensions.setting`, `extensions.limit`).
 */
export function parseMultipart(raw: Buffer, headers: Record<string, string | string[] | undefined>, limits: MultipartLimits = UNLIMITED): Promise<MultipartResult> {
  return new Promise((resolve, reject) => {
    if (limits.parts !== null && partsExceed(raw, boundaryOf(headers['content-type']), limits.parts)) {
      reject(tooMany('parts', 'multipart_max_parts', limits.parts));
      return;
    }
    let bb: busboy.Busboy;
    try {
      bb = loadBusboy()({
        headers: headers as Record<string, string>,
        preservePath: false,
        defParamCharset: 'utf8',
        // busboy stops at its limits silently (skipped parts, a truncated value): the events below refuse instead.
        // Its parts and fieldSize limits fire on reaching the count, not on passing it, hence the + 1.
        limits: {
          parts: limits.parts === null ? Infinity : limits.parts + 1,
          files: limits.files ?? Infinity,
          fields: limits.fields ?? Infinity,
          fieldSize: limits.fieldSize === null ? Infinity : limits.fieldSize + 1,
        },
      });
    } catch (err) {
      reject(new HttpError(400, `Invalid multipart request: ${(err as Error).message}`));
      return;
    }
    bb.on('partsLimit', () => reject(tooMany('parts', 'multipart_max_parts', limits.parts!)));
    bb.on('filesLimit', () => reject(tooMany('files', 'multipart_max_files', limits.files!)));
    bb.on('fieldsLimit', () => reject(tooMany('fields', 'multipart_max_fields', limits.fields!)));
    const out: MultipartResult = { fields: {}, files: {} };
    let declared: boolean[] | undefined;
    let fileIndex = 0;
    const typeOf = (mimeType: string, index: number): string | null => {
      if (!mimeType) return null;
      if (mimeType !== 'text/plain') return mimeType;
      declared ??= declaredFileTypes(raw, boundaryOf(headers['content-type']));
      return declared[index] === false ? null : mimeType;
    };
    let pending = 0;
    let finished = false;
    const maybeDone = () => {
      if (finished && pending === 0) resolve(out);
    };
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) reject(new HttpError(413, `Multipart field ${JSON.stringify(name)} is longer than multipart_max_field_size allows (${limits.fieldSize} bytes)`, { extensions: { setting: 'multipart_max_field_size', limit: limits.fieldSize } }));
      else appendRepeated(out.fields, name, value);
    });
    bb.on('file', (name, stream, info) => {
      pending++;
      const contentType = typeOf(info.mimeType, fileIndex++);
      const chunks: Buffer[] = [];
      // A truncated body errors the file stream too; unhandled, that would crash the process.
      stream.on('error', (err) => reject(new HttpError(400, `Malformed multipart body: ${err.message}`)));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        appendRepeated(out.files, name, new UploadFile(info.filename ?? '', contentType, Buffer.concat(chunks)));
        pending--;
        maybeDone();
      });
    });
    bb.on('error', (err) => reject(new HttpError(400, `Malformed multipart body: ${(err as Error).message}`)));
    bb.on('close', () => {
      finished = true;
      maybeDone();
    });
    bb.end(raw);
  });
}

/** A `parameters.files` entry: `{ image: { required: true, content_type: ['image/png'], validate_magic_numbers: true } }`. */
export interface FileParamSpec {
  name: string;
  required: boolean;
  /** Allowed declared media types (lower case); empty = any. */
  contentTypes: string[];
  /** Check the leading bytes against the declared type, and refuse empty files. */
  validateMagicNumbers: boolean;
}

const FILE_PARAM_KEYS = new Set(['required', 'optional', 'content_type', 'validate_magic_numbers', 'description', 'type', 'format', 'annotation']);

/** Parse a route's `parameters.files` map once, at registration; a bad entry throws a TypeError naming it. */
export function fileParamSpecs(map: Record<string, unknown> | undefined, where = 'parameters.files'): FileParamSpec[] {
  if (!map) return [];
  return Object.entries(map).map(([name, raw]) => {
    const entry = (raw ?? {}) as Record<string, unknown>;
    if (typeof entry !== 'object' || Array.isArray(entry)) throw new TypeError(`${where}.${name} must be an object`);
    for (const k of Object.keys(entry)) {
      if (!FILE_PARAM_KEYS.has(k)) throw new TypeError(`${where}.${name}: unknown key "${k}" (allowed: ${[...FILE_PARAM_KEYS].join(', ')})`);
    }
    const ct = entry.content_type;
    if (ct !== undefined && !(Array.isArray(ct) && ct.every((x) => typeof x === 'string')) && typeof ct !== 'string') {
      throw new TypeError(`${where}.${name}.content_type must be a media type or a list of them, got ${JSON.stringify(ct)}`);
    }
    const contentTypes = (ct === undefined ? [] : Array.isArray(ct) ? ct : [ct]).map((x) => String(x).toLowerCase());
    // Required unless it says otherwise, as for the other parameter sources.
    const required = !(entry.optional === true || entry.required === false);
    return { name, required, contentTypes, validateMagicNumbers: entry.validate_magic_numbers === true };
  });
}

/** Leading-byte signatures of common upload types (the files' own format specifications). */
const SIGNATURES: ReadonlyArray<{ type: string; bytes: number[]; length: number }> = [
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], length: 8 },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff], length: 4 },
  { type: 'image/gif', bytes: [0x47, 0x49, 0x46, 0x38], length: 4 },
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46], length: 4 },
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x03, 0x04], length: 4 },
  { type: 'application/gzip', bytes: [0x1f, 0x8b], length: 2 },
];

function detect(bytes: Buffer): { type: string; magic: string } | undefined {
  const sig = SIGNATURES.find((s) => s.bytes.every((b, i) => bytes[i] === b));
  return sig && { type: sig.type, magic: bytes.subarray(0, sig.length).toString('hex') };
}

export interface FileIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** Check uploaded files against their specs; issues are located at `["files", name]`. */
export function checkFiles(specs: readonly FileParamSpec[], files: Record<string, UploadFile | UploadFile[]>, out: FileIssue[]): void {
  for (const spec of specs) {
    const loc = ['files', spec.name];
    const got = files[spec.name];
    const list = got === undefined ? [] : Array.isArray(got) ? got : [got];
    if (list.length === 0) {
      if (spec.required) out.push({ type: 'missing', loc, msg: 'Field required', input: null });
      continue;
    }
    for (const file of list) {
      const declared = (file.contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
      if (spec.contentTypes.length && !spec.contentTypes.includes(declared)) {
        out.push({ type: 'validation_error', loc, msg: `Invalid content type '${declared || 'application/octet-stream'}'. Allowed types: ${spec.contentTypes.join(', ')}` });
        continue;
      }
      if (!spec.validateMagicNumbers) continue;
      if (file.size === 0) {
        out.push({ type: 'validation_error', loc, msg: 'File buffer is empty', ctx: { buffer_size: 0 } });
        continue;
      }
      // A declared type that the bytes contradict is refused (MIME spoofing); unknown formats pass.
      const found = detect(file.asBytes());
      if (found && declared && found.type !== declared) {
        out.push({
          type: 'validation_error',
          loc,
          msg: `File type mismatch: MIME type is ${declared} but magic numbers indicate ${found.type}`,
          ctx: { declared_mime: declared, detected_type: found.type, magic_bytes: found.magic },
        });
      }
    }
  }
}

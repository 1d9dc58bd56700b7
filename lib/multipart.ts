/**
 * multipart/form-data (RFC 7578) through busboy, from an already size-capped raw body.
 */
import busboy from 'busboy';
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

function add<T>(target: Record<string, T | T[]>, key: string, value: T): void {
  const prev = target[key];
  if (prev === undefined) target[key] = value;
  else if (Array.isArray(prev)) prev.push(value);
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

/** Parse a multipart body. A missing boundary or a malformed body is a 400 problem. */
export function parseMultipart(raw: Buffer, headers: Record<string, string | string[] | undefined>): Promise<MultipartResult> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: headers as Record<string, string>, preservePath: false, defParamCharset: 'utf8' });
    } catch (err) {
      reject(new HttpError(400, `Invalid multipart request: ${(err as Error).message}`));
      return;
    }
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
    bb.on('field', (name, value) => add(out.fields, name, value));
    bb.on('file', (name, stream, info) => {
      pending++;
      const contentType = typeOf(info.mimeType, fileIndex++);
      const chunks: Buffer[] = [];
      // A truncated body errors the file stream too; unhandled, that would crash the process.
      stream.on('error', (err) => reject(new HttpError(400, `Malformed multipart body: ${err.message}`)));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        add(out.files, name, new UploadFile(info.filename ?? '', contentType, Buffer.concat(chunks)));
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

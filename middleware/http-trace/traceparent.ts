/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/ §3.2): parse, validate, create.
 */
import { randomFillSync } from 'node:crypto';

export interface TraceParent {
  version: string;
  traceId: string;
  parentId: string;
  flags: string;
}

/** The version keel emits. */
export const TRACEPARENT_VERSION = '00';
/** Flags of a trace keel starts: sampled (every request is recorded by httpTrace). */
export const DEFAULT_NEW_TRACE_FLAGS = '01';

// Lower-case hex only: the spec forbids upper case in every field (§3.2.2).
const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const VERSION_00_LENGTH = 55;

/**
 * Parse a `traceparent` header; undefined when it is absent or invalid (the caller then starts a new
 * trace, §4.3). Version `ff` is invalid; version 00 must be exactly 55 characters; a higher version
 * is parsed by its first four fields when what follows them starts with `-` (§3.2.4, forward
 * compatibility). All-zero trace or parent ids are invalid (§3.2.2.3, §3.2.2.4).
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | undefined {
  // Several traceparent headers (node joins unknown duplicates with ", ") are invalid.
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  const version = value.slice(0, 2);
  if (version === 'ff') return undefined;
  let head = value;
  if (version === TRACEPARENT_VERSION) {
    if (value.length !== VERSION_00_LENGTH) return undefined;
  } else {
    if (value.length < VERSION_00_LENGTH || (value.length > VERSION_00_LENGTH && value[VERSION_00_LENGTH] !== '-')) return undefined;
    head = value.slice(0, VERSION_00_LENGTH);
  }
  const m = HEADER.exec(head);
  if (!m) return undefined;
  const [, v, traceId, parentId, flags] = m as unknown as [string, string, string, string, string];
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  // Of a future version's flags keep only the ones version 00 defines (sampled, random).
  const outFlags = v === TRACEPARENT_VERSION ? flags : (parseInt(flags, 16) & 0x03).toString(16).padStart(2, '0');
  return { version: v, traceId, parentId, flags: outFlags };
}

/** Random bytes filled at once for this many ids: one randomBytes() call (~3 µs) is most of an id's cost. */
export const TRACE_ENTROPY_POOL_BYTES = 4096;

// Each byte handed out once, then the pool is refilled: the same scheme as crypto.randomUUID()'s
// entropy cache, with the same CSPRNG.
const pool = Buffer.alloc(TRACE_ENTROPY_POOL_BYTES);
let poolOffset = TRACE_ENTROPY_POOL_BYTES;

function randomHex(bytes: number, zero: string): string {
  for (;;) {
    if (poolOffset + bytes > TRACE_ENTROPY_POOL_BYTES) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const id = pool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    if (id !== zero) return id;
  }
}

/** A new random 16-byte trace id (never all zero). */
export const newTraceId = (): string => randomHex(16, ZERO_TRACE);
/** A new random 8-byte span id (never all zero). */
export const newSpanId = (): string => randomHex(8, ZERO_SPAN);

/** `00-<trace-id>-<span-id>-<flags>`. */
export function formatTraceparent(traceId: string, spanId: string, flags: string): string {
  return `${TRACEPARENT_VERSION}-${traceId}-${spanId}-${flags}`;
}

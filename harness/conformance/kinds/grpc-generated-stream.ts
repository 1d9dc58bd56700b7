/**
 * A request stream the corpus gives as a count and a rule instead of messages
 * (`request.stream_size` and `request.stream_generator`, e.g. "Sequential: item_number=[0..99],
 * value=[1..100]"): `stream_size` messages of the method's input type, each field a rule names as
 * `field=[first..last]` stepping evenly from first to last (whole numbers for integer fields); a field
 * the rule leaves out, or whose range is not two numbers ("[base..base+100ms]"), keeps its protobuf
 * default. The server's handler is told the same messages (the manifest's `requests`), so what it
 * receives is checked as for any client stream.
 */
import type { Json } from './kind.js';

/** The input message as far as generation reads it (grpc-spec.ts's ProtoMessage). */
interface InputMessage { fields: ReadonlyArray<{ name: string; type: string }> }

/** The most messages a generated stream may have (a case asking for more is skipped, saying so). */
export const MAX_GENERATED_STREAM = 10_000;

const INTEGER_TYPES = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64']);
const NUMBER = /^\s*-?\d+(?:\.\d+)?\s*$/;

/** The messages of a generated stream, or a reason it cannot be generated. */
export function generatedStream(size: unknown, generator: unknown, input: InputMessage | undefined): Json[] | { skip: string } {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1) return { skip: `stream_size ${JSON.stringify(size)} is not a positive whole number` };
  if (size > MAX_GENERATED_STREAM) return { skip: `stream_size ${size} is over the ${MAX_GENERATED_STREAM} messages the runner generates` };
  const ranges: Array<{ field: string; first: number; last: number; integer: boolean }> = [];
  for (const m of String(generator ?? '').matchAll(/([A-Za-z_]\w*)\s*=\s*\[([^\]]*?)\.\.([^\]]*?)\]/g)) {
    const field = input?.fields.find((f) => f.name === m[1]);
    if (!field || !NUMBER.test(m[2]!) || !NUMBER.test(m[3]!)) continue;
    ranges.push({ field: field.name, first: Number(m[2]), last: Number(m[3]), integer: INTEGER_TYPES.has(field.type) });
  }
  return Array.from({ length: size }, (_, i) => {
    const msg: Json = {};
    for (const r of ranges) {
      const v = size === 1 ? r.first : r.first + ((r.last - r.first) * i) / (size - 1);
      msg[r.field] = r.integer ? Math.round(v) : v;
    }
    return msg;
  });
}

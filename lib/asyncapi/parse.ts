/**
 * Reading AsyncAPI 2.x and 3.0 documents into one model (channels, operations, messages with the
 * pointer of their payload schema) and into the spec's ParseResult.
 *
 * 2.x has no `action`: `publish` describes what clients publish, i.e. what the application
 * *receives*, so publish → `receive` and subscribe → `send` (the 3.0 migration guide's mapping,
 * https://www.asyncapi.com/docs/migration/migrating-to-v3).
 */
import type { ParseResult, ParsedChannel, ParsedMessage, ParsedOperation } from '../records/protocol.js';
import { AsyncApiDocumentError, childPointer, follow, isObject, refTokens } from './resolve.js';
import { deepResolve, ExpansionBudget } from './budget.js';

/** A message as keel validates it. */
export interface ModelMessage {
  /** The name ParseResult reports. */
  name: string;
  /** Every name a client may use for it: channel key, component key, `name`, `messageId`. */
  aliases: string[];
  /** Pointer of the payload schema; undefined when the message declares no payload. */
  payloadPointer: string | undefined;
  /** `schemaFormat` of the payload, when declared. */
  schemaFormat: string | undefined;
  /** Pointer of the message object (identity across channels). */
  pointer: string;
}

export interface ModelChannel {
  name: string;
  address: string;
  messages: ModelMessage[];
  /** The channel's `bindings` as written (their `$ref`s resolved only by parseAsyncApi), and where they are; undefined when absent. */
  bindings: { value: unknown; pointer: string } | undefined;
}

export interface AsyncApiModel {
  specVersion: string;
  major: 2 | 3;
  title: string;
  apiVersion: string;
  channels: ModelChannel[];
  operations: ParsedOperation[];
  /** Unique messages: those of the channels, then unreferenced components.messages. */
  messages: ModelMessage[];
}

/** JSON bytes of a channel / operation entry besides its names (keys and punctuation). */
const CHANNEL_BYTES = 48;
const OPERATION_BYTES = 40;

const uniq = (xs: Array<string | undefined>): string[] => [...new Set(xs.filter((x): x is string => typeof x === 'string' && x !== ''))];

function entries(v: unknown, at: string): Array<[string, unknown]> {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) throw new AsyncApiDocumentError(at, 'expected an object');
  return Object.entries(v);
}

/** Component key when a $ref points at `#/components/<kind>/<key>`. */
function componentKey(ref: unknown, kind: string, at: string): string | undefined {
  if (typeof ref !== 'string') return undefined;
  const tokens = refTokens(ref, at);
  return tokens.length === 3 && tokens[0] === 'components' && tokens[1] === kind ? tokens[2] : undefined;
}

function readMessage(doc: unknown, raw: unknown, at: string, fallbackName: string, preferKey: boolean, budget: ExpansionBudget): ModelMessage {
  const { value, pointer } = follow(doc, raw, at);
  if (!isObject(value)) throw new AsyncApiDocumentError(pointer, 'a message must be an object');
  const compKey = componentKey(isObject(raw) ? raw.$ref : undefined, 'messages', at);
  const declaredName = typeof value.name === 'string' ? value.name : undefined;
  const messageId = typeof value.messageId === 'string' ? value.messageId : undefined;
  const name = preferKey ? fallbackName : messageId ?? compKey ?? declaredName ?? fallbackName;
  let payloadPointer: string | undefined;
  let schemaFormat = typeof value.schemaFormat === 'string' ? value.schemaFormat : undefined;
  if (value.payload !== undefined) {
    let payload = follow(doc, value.payload, childPointer(pointer, 'payload'));
    // 3.0 Multi Format Schema Object: { schemaFormat, schema }.
    if (isObject(payload.value) && typeof payload.value.schemaFormat === 'string' && 'schema' in payload.value) {
      schemaFormat = payload.value.schemaFormat;
      payload = follow(doc, payload.value.schema, childPointer(payload.pointer, 'schema'));
    }
    payloadPointer = payload.pointer;
  }
  // Each read is a name in the answer: a channel that is a $ref shares its messages, but the answer lists them again.
  budget.charge(1, name.length + 3, at);
  return { name, aliases: uniq([name, fallbackName, compKey, declaredName, messageId]), payloadPointer, schemaFormat, pointer };
}

function readV3(doc: Record<string, unknown>, model: AsyncApiModel, budget: ExpansionBudget): void {
  const channelByPointer = new Map<string, string>();
  for (const [name, raw] of entries(doc.channels, '#/channels')) {
    const at = childPointer('#/channels', name);
    const { value, pointer } = follow(doc, raw, at);
    if (!isObject(value)) throw new AsyncApiDocumentError(at, 'a channel must be an object');
    channelByPointer.set(pointer, name).set(at, name);
    const messages = entries(value.messages, childPointer(pointer, 'messages')).map(([key, m]) =>
      readMessage(doc, m, childPointer(childPointer(pointer, 'messages'), key), key, true, budget),
    );
    // `address` may be null or absent in 3.0 (an unknown or dynamic address): fall back to the key.
    const address = typeof value.address === 'string' ? value.address : name;
    const bindings = value.bindings === undefined ? undefined : { value: value.bindings, pointer: childPointer(pointer, 'bindings') };
    budget.charge(1, name.length + address.length + CHANNEL_BYTES, at);
    model.channels.push({ name, address, messages, bindings });
  }
  for (const [name, raw] of entries(doc.operations, '#/operations')) {
    const at = childPointer('#/operations', name);
    const { value } = follow(doc, raw, at);
    if (!isObject(value)) throw new AsyncApiDocumentError(at, 'an operation must be an object');
    if (value.action !== 'send' && value.action !== 'receive') {
      throw new AsyncApiDocumentError(childPointer(at, 'action'), `action must be "send" or "receive", got ${JSON.stringify(value.action)}`);
    }
    const ref = isObject(value.channel) ? value.channel.$ref : undefined;
    if (typeof ref !== 'string') throw new AsyncApiDocumentError(childPointer(at, 'channel'), 'an operation needs a channel $ref');
    const target = follow(doc, value.channel, childPointer(at, 'channel'));
    const channel = channelByPointer.get(target.pointer) ?? refTokens(ref, at).at(-1) ?? ref;
    budget.charge(1, name.length + channel.length + OPERATION_BYTES, at);
    model.operations.push({ name, action: value.action, channel });
  }
}

function readV2(doc: Record<string, unknown>, model: AsyncApiModel, budget: ExpansionBudget): void {
  for (const [name, raw] of entries(doc.channels, '#/channels')) {
    const at = childPointer('#/channels', name);
    const { value, pointer } = follow(doc, raw, at);
    if (!isObject(value)) throw new AsyncApiDocumentError(at, 'a channel must be an object');
    const messages: ModelMessage[] = [];
    for (const kind of ['publish', 'subscribe'] as const) {
      if (value[kind] === undefined) continue;
      const opAt = childPointer(pointer, kind);
      const op = follow(doc, value[kind], opAt);
      if (!isObject(op.value)) throw new AsyncApiDocumentError(opAt, 'an operation must be an object');
      const opName = typeof op.value.operationId === 'string' ? op.value.operationId : `${name}.${kind}`;
      budget.charge(1, opName.length + name.length + OPERATION_BYTES, opAt);
      model.operations.push({ name: opName, action: kind === 'publish' ? 'receive' : 'send', channel: name });
      if (op.value.message === undefined) continue;
      const msgAt = childPointer(op.pointer, 'message');
      const msg = follow(doc, op.value.message, msgAt);
      if (isObject(msg.value) && Array.isArray(msg.value.oneOf)) {
        msg.value.oneOf.forEach((m, i) => messages.push(readMessage(doc, m, childPointer(childPointer(msg.pointer, 'oneOf'), i), `${opName}.message.${i}`, false, budget)));
      } else {
        messages.push(readMessage(doc, op.value.message, msgAt, `${opName}.message`, false, budget));
      }
    }
    const bindings = value.bindings === undefined ? undefined : { value: value.bindings, pointer: childPointer(pointer, 'bindings') };
    // publish and subscribe often share a message: list it once (sets: a oneOf may list thousands).
    const pointers = new Set<string>();
    const names = new Set<string>();
    const unique = messages.filter((m) => {
      if (pointers.has(m.pointer) || names.has(m.name)) return false;
      pointers.add(m.pointer);
      names.add(m.name);
      return true;
    });
    budget.charge(1, 2 * name.length + CHANNEL_BYTES, at);
    model.channels.push({ name, address: name, messages: unique, bindings });
  }
}

/**
 * Read a document into keel's model; AsyncApiDocumentError when it is not AsyncAPI 2.x / 3.0, and
 * AsyncApiBudgetError when what it expands to passes `budget` (default: the default limits).
 */
export function analyseAsyncApi(spec: unknown, budget: ExpansionBudget = new ExpansionBudget()): AsyncApiModel {
  if (!isObject(spec)) throw new AsyncApiDocumentError('', 'an AsyncAPI document must be a JSON object');
  const version = spec.asyncapi;
  if (typeof version !== 'string') throw new AsyncApiDocumentError('#/asyncapi', 'the "asyncapi" version string is missing');
  const major = /^2\.\d+\.\d+/.test(version) ? 2 : /^3\.0\.\d+/.test(version) ? 3 : undefined;
  if (!major) throw new AsyncApiDocumentError('#/asyncapi', `AsyncAPI ${JSON.stringify(version)} is not supported (keel reads 2.x and 3.0)`);
  const info = spec.info;
  if (!isObject(info) || typeof info.title !== 'string' || typeof info.version !== 'string') {
    throw new AsyncApiDocumentError('#/info', 'info.title and info.version are required strings');
  }
  const model: AsyncApiModel = { specVersion: version, major, title: info.title, apiVersion: info.version, channels: [], operations: [], messages: [] };
  if (major === 3) readV3(spec, model, budget);
  else readV2(spec, model, budget);
  const seen = new Set<string>();
  const names = new Set<string>();
  for (const m of model.channels.flatMap((c) => c.messages)) {
    if (seen.has(m.pointer) || names.has(m.name)) continue;
    seen.add(m.pointer);
    names.add(m.name);
    model.messages.push(m);
  }
  const components = isObject(spec.components) ? spec.components : {};
  for (const [key, raw] of entries(components.messages, '#/components/messages')) {
    const m = readMessage(spec, raw, childPointer('#/components/messages', key), key, major === 3, budget);
    if (!seen.has(m.pointer) && !names.has(m.name)) {
      seen.add(m.pointer);
      names.add(m.name);
      model.messages.push(m);
    }
  }
  return model;
}

/**
 * The spec's ParseResult, payload schemas resolved. Every expansion of the call draws on one `budget`
 * (default: the default limits), so the answer is refused (AsyncApiBudgetError) before it is built.
 */
export function parseAsyncApi(spec: unknown, budget: ExpansionBudget = new ExpansionBudget()): ParseResult {
  const model = analyseAsyncApi(spec, budget);
  // Every expansion of the answer (channel bindings, payload schemas), measured (each $ref target once) and
  // held to the budget together before the first is built: a refusal costs time linear in the document,
  // not the budget's worth of building.
  const expansions: Array<{ value: unknown; pointer: string }> = [
    ...model.channels.flatMap((c) => (c.bindings ? [c.bindings] : [])),
    ...model.messages.flatMap((m) => (m.payloadPointer === undefined ? [] : [{ value: { $ref: m.payloadPointer }, pointer: m.pointer }])),
  ];
  let total = { nodes: 0, bytes: 0 };
  for (const e of expansions) {
    const cost = budget.measure(spec, e.value, e.pointer);
    total = { nodes: Math.min(Number.MAX_SAFE_INTEGER, total.nodes + cost.nodes), bytes: Math.min(Number.MAX_SAFE_INTEGER, total.bytes + cost.bytes) };
    budget.ensure(total, e.pointer);
  }
  const channels: ParsedChannel[] = model.channels.map((c) => ({
    name: c.name, address: c.address, messages: c.messages.map((m) => m.name),
    bindings: c.bindings ? deepResolve(spec, c.bindings.value, c.bindings.pointer, budget) : null,
  }));
  const messages: ParsedMessage[] = model.messages.map((m) => ({
    name: m.name,
    schema: m.payloadPointer === undefined ? null : deepResolve(spec, { $ref: m.payloadPointer }, m.pointer, budget),
  }));
  return { spec_version: model.specVersion, title: model.title, api_version: model.apiVersion, channels, operations: model.operations, messages };
}

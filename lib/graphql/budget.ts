/**
 * The response-size budget of a GraphQL request (issue 26 item 2): `max_response_bytes`, checked twice.
 *
 * 1. Before execution, as a validation rule: an estimate of the answer's JSON size that weighs what
 *    fields can return, not only how many there are. Complexity counts `hello(name: $n)` as 1, so 490
 *    aliases of it stayed under a complexity limit of 500 while a 400 KB `$n`, echoed 490 times, made
 *    a 191 MiB answer (+880 MB of memory). Here every argument costs its JSON size wherever the field
 *    is selected (a string argument echoed back costs its length), every alias counts, and a list
 *    field's element costs are multiplied by its `first` / `limit` argument as for complexity.
 * 2. After execution, on the result itself: counted up to the limit (lib/http/json-size.ts), never
 *    serialised whole to find it too large, then the serialized bytes checked exactly. What resolvers
 *    return (a list without a page size, a long text) is only known here.
 *
 * Estimate of one field, in bytes: `"key":` plus its value, where a leaf value is LEAF_BYTES plus its
 * arguments' sizes, an object value is `{…}` around its selection plus its arguments, and a list value
 * is n such values. Fragments are measured once per operation and reused at every spread
 * (limits.ts's FragmentMemo), so the estimate is linear in the document.
 */
import {
  GraphQLError, Kind, getNamedType, getNullableType, isListType, valueFromASTUntyped,
  type ASTVisitor, type DocumentNode, type GraphQLNamedType, type GraphQLSchema, type OperationDefinitionNode,
  type SelectionSetNode, type ValidationContext, type ValidationRule, type ValueNode,
} from 'graphql';
import { fieldType, FragmentMemo, MAX_MEASURE, multiplier } from './limits.js';
import { jsonSize, NOT_SERIALISABLE } from '../http/json-size.js';

export { DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES } from '../records/graphql.js';

/** Estimated JSON size of a scalar or enum value, its arguments aside (a number, a short string). */
export const LEAF_BYTES = 8;
/** `extensions.code` of both refusals. */
export const RESPONSE_SIZE_CODE = 'RESPONSE_SIZE_LIMIT_EXCEEDED';

const add = (a: number, b: number): number => Math.min(MAX_MEASURE, a + b);
const times = (n: number, a: number): number => Math.min(MAX_MEASURE, n * a);

interface Estimate {
  readonly schema: GraphQLSchema;
  readonly memo: FragmentMemo;
  readonly variables: Readonly<Record<string, unknown>>;
  /** JSON size of each variable, counted once however often it is used. */
  readonly variableBytes: Map<string, number>;
}

function sizeOfVariable(e: Estimate, name: string): number {
  let size = e.variableBytes.get(name);
  if (size === undefined) {
    size = name in e.variables ? Math.max(0, jsonSize(e.variables[name], MAX_MEASURE)) : 4;
    e.variableBytes.set(name, size);
  }
  return size;
}

/** JSON size of an argument value as written in the query, variables by their request value. */
function valueBytes(e: Estimate, node: ValueNode): number {
  switch (node.kind) {
    case Kind.VARIABLE: return sizeOfVariable(e, node.name.value);
    case Kind.STRING: return node.value.length + 2;
    case Kind.LIST: return node.values.reduce((sum, v) => add(sum, valueBytes(e, v) + 1), 2);
    case Kind.OBJECT: return node.fields.reduce((sum, f) => add(sum, add(f.name.value.length + 4, valueBytes(e, f.value))), 2);
    case Kind.NULL: return 4;
    case Kind.BOOLEAN: return node.value ? 4 : 5;
    default: return node.value.length;
  }
}

function selectionBytes(e: Estimate, set: SelectionSetNode, parent: GraphQLNamedType | undefined): number {
  let total = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const type = fieldType(parent, sel.name.value);
      let value = sel.selectionSet ? add(2, selectionBytes(e, sel.selectionSet, type ? getNamedType(type) : undefined)) : LEAF_BYTES;
      for (const arg of sel.arguments ?? []) value = add(value, valueBytes(e, arg.value));
      if (type && isListType(getNullableType(type))) value = add(2, times(multiplier(sel, e.variables), value + 1));
      total = add(total, add((sel.alias ?? sel.name).value.length + 4, value));
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const cond = sel.typeCondition ? e.schema.getType(sel.typeCondition.name.value) ?? undefined : parent;
      total = add(total, selectionBytes(e, sel.selectionSet, cond));
    } else {
      total = add(total, e.memo.measure(sel.name.value, (frag) => selectionBytes(e, frag.selectionSet, e.schema.getType(frag.typeCondition.name.value) ?? undefined)));
    }
  }
  return total;
}

/** Estimated JSON size of `operation`'s answer (see module comment), at most MAX_MEASURE. */
export function estimateResponseBytes(
  schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> = {},
): number {
  const vars: Record<string, unknown> = {};
  // A variable left out by the client counts with its declared default (GraphQL spec §6.1.2).
  for (const def of operation.variableDefinitions ?? []) {
    const name = def.variable.name.value;
    if (name in variables) vars[name] = variables[name];
    else if (def.defaultValue) vars[name] = valueFromASTUntyped(def.defaultValue);
  }
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const e: Estimate = { schema, memo: new FragmentMemo(fragments), variables: vars, variableBytes: new Map() };
  // `{"data":{…}}` around the operation's selection.
  return add(12, selectionBytes(e, operation.selectionSet, schema.getRootType(operation.operation) ?? undefined));
}

/** The error for `operation` when its estimated answer is over `limit` bytes, else undefined. */
function sizeError(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, limit: number, variables: Readonly<Record<string, unknown>>): GraphQLError | undefined {
  const estimate = estimateResponseBytes(schema, document, operation, variables);
  if (estimate <= limit) return undefined;
  return new GraphQLError(`The estimated response size of ${estimate} bytes exceeds the limit of ${limit} bytes (max_response_bytes)`, {
    nodes: operation,
    extensions: { code: RESPONSE_SIZE_CODE, estimated_bytes: estimate, limit },
  });
}

/** A validation rule refusing operations whose estimated answer is over `limit` bytes. */
export function responseSizeRule(limit: number, variables: Readonly<Record<string, unknown>> = {}): ValidationRule {
  return function responseSizeLimit(context: ValidationContext): ASTVisitor {
    return {
      OperationDefinition(node) {
        const error = sizeError(context.getSchema(), context.getDocument(), node, limit, variables);
        if (error) context.reportError(error);
      },
    };
  };
}

/** What responseSizeRule reports for an already valid `document`, without a graphql-js validation pass. */
export function responseSizeErrors(schema: GraphQLSchema, document: DocumentNode, limit: number, variables: Readonly<Record<string, unknown>>): GraphQLError[] {
  const errors: GraphQLError[] = [];
  for (const def of document.definitions) {
    const error = def.kind === Kind.OPERATION_DEFINITION ? sizeError(schema, document, def, limit, variables) : undefined;
    if (error) errors.push(error);
  }
  return errors;
}

/** The error an executed result over the limit is replaced with. */
export function responseTooLarge(limit: number): GraphQLError {
  return new GraphQLError(`The response exceeds the limit of ${limit} bytes (max_response_bytes)`, { extensions: { code: RESPONSE_SIZE_CODE, limit } });
}

/**
 * True when an executed result would serialise past `limit` bytes, counted without serialising it
 * (a value that cannot be counted is left to the serialiser).
 */
export function resultExceeds(result: unknown, limit: number): boolean {
  const size = jsonSize(result, limit);
  return size !== NOT_SERIALISABLE && size > limit;
}

/**
 * Pre-execution controls as graphql-js validation rules: introspection switch, depth limit and
 * complexity limit. They run inside `validate()`, so an over-limit query is rejected before a single
 * resolver runs (spec: "complexity_limit / depth_limit … enforced before execution").
 *
 * Measures (docs/graphql.md, "Limits"):
 * - depth: the deepest chain of nested fields, with fragment spreads and inline fragments inlined;
 *   `{ a { b } }` has depth 2.
 * - complexity: every selected field costs 1; a list field's children cost is multiplied by its
 *   `first` or `limit` argument when present: cost(f) = 1 + n × Σ cost(children).
 *
 * Fragment cycles are a validation error of their own (NoFragmentCyclesRule, GraphQL spec §5.5.2.2);
 * the walkers below track the fragments on the current path so a cyclic document cannot loop forever.
 */
import {
  GraphQLError, Kind, getNamedType, getNullableType, isListType, isObjectType, isInterfaceType, valueFromASTUntyped,
  type ASTVisitor, type FragmentDefinitionNode, type GraphQLSchema, type GraphQLNamedType, type OperationDefinitionNode,
  type SelectionSetNode, type ValidationContext, type ValidationRule, type FieldNode, type DocumentNode,
} from 'graphql';

/** Limits of one GraphQL route (null = unlimited). */
export interface GraphqlLimits {
  introspection_enabled: boolean;
  depth_limit: number | null;
  complexity_limit: number | null;
  /** Serialized answer cap (lib/graphql/budget.ts); absent = unlimited here, the routes default it. */
  max_response_bytes?: number | null;
}

/**
 * Depth limit of an operation that selects nothing but introspection (`__schema`, `__type`,
 * `__typename`), when introspection is enabled and the route's own limit is lower. The standard
 * introspection query (graphql-js's getIntrospectionQuery, what GraphiQL sends) has depth 15: its
 * `ofType` chain is that deep however small the schema. Its list nesting (`fields` in `type` in
 * `fields` …) is bounded separately by graphql-js's MaxIntrospectionDepthRule (3 levels).
 */
export const INTROSPECTION_DEPTH_LIMIT = 20;
/**
 * Complexity limit of an introspection-only operation (as INTROSPECTION_DEPTH_LIMIT). The standard
 * introspection query costs about 230 (the same for every schema: no pagination arguments); this
 * bound still refuses an alias flood (`a1: __schema { … } a2: __schema { … } …`).
 */
export const INTROSPECTION_COMPLEXITY_LIMIT = 1000;

/** Arguments whose integer value multiplies the cost of a list field's children. */
export const PAGINATION_ARGUMENTS: readonly string[] = ['first', 'limit'];

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

/**
 * Largest measure reported: complexity adds and multiplies, so a few kilobytes of fragments that each
 * spread the previous one ten times describe 10^100 fields. Sums saturate here instead of losing
 * precision (or reaching Infinity); anything this large is over every limit.
 */
export const MAX_MEASURE = Number.MAX_SAFE_INTEGER;

function add(a: number, b: number): number {
  return Math.min(MAX_MEASURE, a + b);
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const map = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) map.set(def.name.value, def);
  return map;
}

/**
 * A fragment's measure, computed once per document (per measurement) and reused at every spread, so the
 * work is linear in the document however often fragments spread each other. A fragment met again while
 * its own measure is being computed is a cycle (rejected by NoFragmentCyclesRule, GraphQL spec §5.5.2.2):
 * it counts 0 there, so a cyclic document cannot loop, and its measures do not matter since it never runs.
 */
export class FragmentMemo {
  readonly #fragments: Fragments;
  readonly #done = new Map<string, number>();
  readonly #inProgress = new Set<string>();

  constructor(fragments: Fragments) {
    this.#fragments = fragments;
  }

  measure(name: string, compute: (fragment: FragmentDefinitionNode) => number): number {
    const known = this.#done.get(name);
    if (known !== undefined) return known;
    const fragment = this.#fragments.get(name);
    // Unknown fragments are KnownFragmentNamesRule's error; cycles are cut (see above).
    if (!fragment || this.#inProgress.has(name)) return 0;
    this.#inProgress.add(name);
    const value = compute(fragment);
    this.#inProgress.delete(name);
    this.#done.set(name, value);
    return value;
  }
}

/** Deepest field nesting of a selection set (fragments inlined, each measured once). */
function selectionDepth(set: SelectionSetNode | undefined, memo: FragmentMemo): number {
  if (!set) return 0;
  let deepest = 0;
  for (const sel of set.selections) {
    let d: number;
    if (sel.kind === Kind.FIELD) d = 1 + selectionDepth(sel.selectionSet, memo);
    else if (sel.kind === Kind.INLINE_FRAGMENT) d = selectionDepth(sel.selectionSet, memo);
    else d = memo.measure(sel.name.value, (frag) => selectionDepth(frag.selectionSet, memo));
    if (d > deepest) deepest = d;
  }
  return deepest;
}

/**
 * Measures the operations of one document. Fragment measures are shared by all its operations, so
 * measuring every operation of a document is linear in the document's size.
 */
export class DocumentMeasure {
  readonly #schema: GraphQLSchema | undefined;
  readonly #fragments: Fragments;
  readonly #variables: Readonly<Record<string, unknown>>;
  #depthMemo: FragmentMemo | undefined;
  #costMemo: FragmentMemo | undefined;
  #dataMemo: FragmentMemo | undefined;

  constructor(document: DocumentNode, schema?: GraphQLSchema, variables: Readonly<Record<string, unknown>> = {}) {
    this.#schema = schema;
    this.#fragments = fragmentsOf(document);
    this.#variables = variables;
  }

  /**
   * True when every field `operation` selects at its root is `__schema`, `__type` or `__typename`
   * (through fragments too): a client's introspection query, not a data query.
   */
  introspectionOnly(operation: OperationDefinitionNode): boolean {
    // 1 when a selection set selects a data field (not `__…`), 0 otherwise; per fragment once per document.
    const memo = (this.#dataMemo ??= new FragmentMemo(this.#fragments));
    const selectsData = (set: SelectionSetNode): number => {
      for (const sel of set.selections) {
        const found = sel.kind === Kind.FIELD ? !sel.name.value.startsWith('__')
          : sel.kind === Kind.INLINE_FRAGMENT ? selectsData(sel.selectionSet) === 1
          : memo.measure(sel.name.value, (fragment) => selectsData(fragment.selectionSet)) === 1;
        if (found) return 1;
      }
      return 0;
    };
    return selectsData(operation.selectionSet) === 0;
  }

  /** Depth of `operation` (see module comment). */
  depth(operation: OperationDefinitionNode): number {
    this.#depthMemo ??= new FragmentMemo(this.#fragments);
    return selectionDepth(operation.selectionSet, this.#depthMemo);
  }

  /** Complexity of `operation` (see module comment), at most MAX_MEASURE. */
  complexity(operation: OperationDefinitionNode): number {
    const schema = this.#schema;
    if (!schema) throw new TypeError('DocumentMeasure needs the schema to measure complexity');
    const vars: Record<string, unknown> = {};
    // A variable left out by the client counts with its declared default (GraphQL spec §6.1.2).
    for (const def of operation.variableDefinitions ?? []) {
      const name = def.variable.name.value;
      if (name in this.#variables) vars[name] = this.#variables[name];
      else if (def.defaultValue) vars[name] = valueFromASTUntyped(def.defaultValue);
    }
    // Fragment costs read the variables (`first: $n`), whose defaults are the operation's: one memo per
    // operation unless it declares no variables (the usual case), where operations can share it.
    const memo = operation.variableDefinitions?.length ? new FragmentMemo(this.#fragments) : (this.#costMemo ??= new FragmentMemo(this.#fragments));
    const root = schema.getRootType(operation.operation) ?? undefined;
    return selectionCost(operation.selectionSet, root, schema, memo, vars);
  }
}

/** Depth of one operation of `document` (see module comment). */
export function measureDepth(document: DocumentNode, operation: OperationDefinitionNode): number {
  return new DocumentMeasure(document).depth(operation);
}

/** A list field's length as its pagination argument (`first`, `limit`, …) asks for; 1 when none is given. */
export function multiplier(field: FieldNode, variables: Readonly<Record<string, unknown>>): number {
  for (const arg of field.arguments ?? []) {
    if (!PAGINATION_ARGUMENTS.includes(arg.name.value)) continue;
    const value = valueFromASTUntyped(arg.value, variables as Record<string, unknown>);
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return 1;
}

/** The type of field `name` of an object or interface type, if it has one. */
export function fieldType(parent: GraphQLNamedType | undefined, name: string) {
  if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) return undefined;
  return parent.getFields()[name]?.type;
}

function selectionCost(
  set: SelectionSetNode | undefined, parent: GraphQLNamedType | undefined, schema: GraphQLSchema,
  memo: FragmentMemo, variables: Readonly<Record<string, unknown>>,
): number {
  if (!set) return 0;
  let total = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const type = fieldType(parent, sel.name.value);
      const n = type && isListType(getNullableType(type)) ? multiplier(sel, variables) : 1;
      const named = type ? getNamedType(type) : undefined;
      total = add(total, add(1, Math.min(MAX_MEASURE, n * selectionCost(sel.selectionSet, named, schema, memo, variables))));
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
      total = add(total, selectionCost(sel.selectionSet, cond ?? undefined, schema, memo, variables));
    } else {
      // A fragment's cost depends on its own type condition only, so it is the same at every spread.
      total = add(total, memo.measure(sel.name.value, (frag) => {
        const cond = schema.getType(frag.typeCondition.name.value) ?? undefined;
        return selectionCost(frag.selectionSet, cond, schema, memo, variables);
      }));
    }
  }
  return total;
}

/** Complexity of one operation (see module comment); `variables` resolve `first: $n`. At most MAX_MEASURE. */
export function measureComplexity(
  schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> = {},
): number {
  return new DocumentMeasure(document, schema, variables).complexity(operation);
}

/** Rejects `__schema` and `__type` (GraphQL spec §4.2); `__typename` stays available. */
export function introspectionDisabledRule(context: ValidationContext): ASTVisitor {
  return {
    Field(node) {
      const name = node.name.value;
      if (name === '__schema' || name === '__type') {
        context.reportError(new GraphQLError('Introspection is disabled', {
          nodes: node,
          extensions: { code: 'INTROSPECTION_DISABLED', introspection_enabled: false },
        }));
      }
    },
  };
}

/** The limit that applies to `operation` over `ownLimit`: the introspection bound when it is introspection-only. */
function introspectionLimit(measure: DocumentMeasure, operation: OperationDefinitionNode, ownLimit: number, introspectionBound: number): number {
  return introspectionBound > ownLimit && measure.introspectionOnly(operation) ? introspectionBound : ownLimit;
}

/** A rule rejecting operations deeper than `limit` (introspection-only operations: INTROSPECTION_DEPTH_LIMIT). */
export function depthLimitRule(ownLimit: number): ValidationRule {
  return function depthLimit(context: ValidationContext): ASTVisitor {
    const measure = new DocumentMeasure(context.getDocument());
    return {
      OperationDefinition(node) {
        const depth = measure.depth(node);
        if (depth <= ownLimit) return;
        // With introspection enabled (otherwise introspectionDisabledRule refuses it), an introspection-only
        // operation has its own bound, so GraphiQL's query works under a small limit (docs/graphql.md).
        const limit = introspectionLimit(measure, node, ownLimit, INTROSPECTION_DEPTH_LIMIT);
        if (depth > limit) {
          context.reportError(new GraphQLError(`Query depth ${depth} exceeds the limit of ${limit}`, {
            nodes: node,
            extensions: { code: 'DEPTH_LIMIT_EXCEEDED', depth, limit },
          }));
        }
      },
    };
  };
}

/** A rule rejecting operations whose complexity exceeds `limit` (introspection-only operations: INTROSPECTION_COMPLEXITY_LIMIT). */
export function complexityLimitRule(ownLimit: number, variables: Readonly<Record<string, unknown>> = {}): ValidationRule {
  return function complexityLimit(context: ValidationContext): ASTVisitor {
    const measure = new DocumentMeasure(context.getDocument(), context.getSchema(), variables);
    return {
      OperationDefinition(node) {
        const complexity = measure.complexity(node);
        if (complexity <= ownLimit) return;
        const limit = introspectionLimit(measure, node, ownLimit, INTROSPECTION_COMPLEXITY_LIMIT);
        if (complexity > limit) {
          context.reportError(new GraphQLError(`Query complexity ${complexity} exceeds the limit of ${limit}`, {
            nodes: node,
            extensions: { code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity, limit },
          }));
        }
      },
    };
  };
}

/** The extra validation rules for `limits`, given the request's variables. Empty when nothing is limited. */
export function limitRules(limits: Readonly<GraphqlLimits>, variables: Readonly<Record<string, unknown>> | null | undefined): ValidationRule[] {
  const rules: ValidationRule[] = [];
  if (!limits.introspection_enabled) rules.push(introspectionDisabledRule);
  if (limits.depth_limit !== null) rules.push(depthLimitRule(limits.depth_limit));
  if (limits.complexity_limit !== null) rules.push(complexityLimitRule(limits.complexity_limit, variables ?? {}));
  return rules;
}

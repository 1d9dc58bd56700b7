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
}

/** Arguments whose integer value multiplies the cost of a list field's children. */
export const PAGINATION_ARGUMENTS: readonly string[] = ['first', 'limit'];

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const map = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) map.set(def.name.value, def);
  return map;
}

/** Deepest field nesting of a selection set (fragments inlined, cycles cut). */
function selectionDepth(set: SelectionSetNode | undefined, fragments: Fragments, onPath: Set<string>): number {
  if (!set) return 0;
  let deepest = 0;
  for (const sel of set.selections) {
    let d = 0;
    if (sel.kind === Kind.FIELD) d = 1 + selectionDepth(sel.selectionSet, fragments, onPath);
    else if (sel.kind === Kind.INLINE_FRAGMENT) d = selectionDepth(sel.selectionSet, fragments, onPath);
    else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      if (frag && !onPath.has(name)) {
        onPath.add(name);
        d = selectionDepth(frag.selectionSet, fragments, onPath);
        onPath.delete(name);
      }
    }
    if (d > deepest) deepest = d;
  }
  return deepest;
}

/** Depth of one operation of `document` (see module comment). */
export function measureDepth(document: DocumentNode, operation: OperationDefinitionNode): number {
  return selectionDepth(operation.selectionSet, fragmentsOf(document), new Set());
}

function multiplier(field: FieldNode, variables: Readonly<Record<string, unknown>>): number {
  for (const arg of field.arguments ?? []) {
    if (!PAGINATION_ARGUMENTS.includes(arg.name.value)) continue;
    const value = valueFromASTUntyped(arg.value, variables as Record<string, unknown>);
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return 1;
}

function fieldType(parent: GraphQLNamedType | undefined, name: string) {
  if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) return undefined;
  return parent.getFields()[name]?.type;
}

function selectionCost(
  set: SelectionSetNode | undefined, parent: GraphQLNamedType | undefined, schema: GraphQLSchema,
  fragments: Fragments, variables: Readonly<Record<string, unknown>>, onPath: Set<string>,
): number {
  if (!set) return 0;
  let total = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const type = fieldType(parent, sel.name.value);
      const n = type && isListType(getNullableType(type)) ? multiplier(sel, variables) : 1;
      const named = type ? getNamedType(type) : undefined;
      total += 1 + n * selectionCost(sel.selectionSet, named, schema, fragments, variables, onPath);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
      total += selectionCost(sel.selectionSet, cond ?? undefined, schema, fragments, variables, onPath);
    } else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      if (frag && !onPath.has(name)) {
        onPath.add(name);
        const cond = schema.getType(frag.typeCondition.name.value) ?? undefined;
        total += selectionCost(frag.selectionSet, cond, schema, fragments, variables, onPath);
        onPath.delete(name);
      }
    }
  }
  return total;
}

/** Complexity of one operation (see module comment); `variables` resolve `first: $n`. */
export function measureComplexity(
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
  const root = schema.getRootType(operation.operation) ?? undefined;
  return selectionCost(operation.selectionSet, root, schema, fragmentsOf(document), vars, new Set());
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

/** A rule rejecting operations deeper than `limit`. */
export function depthLimitRule(limit: number): ValidationRule {
  return function depthLimit(context: ValidationContext): ASTVisitor {
    return {
      OperationDefinition(node) {
        const depth = measureDepth(context.getDocument(), node);
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

/** A rule rejecting operations whose complexity exceeds `limit`. */
export function complexityLimitRule(limit: number, variables: Readonly<Record<string, unknown>> = {}): ValidationRule {
  return function complexityLimit(context: ValidationContext): ASTVisitor {
    return {
      OperationDefinition(node) {
        const complexity = measureComplexity(context.getSchema(), context.getDocument(), node, variables);
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

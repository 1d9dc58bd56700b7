/**
 * graphql-js's "Did you mean …" suggestions, removed where the schema is not to be revealed
 * (introspection disabled: docs/graphql.md, Limits).
 */
import { GraphQLError } from 'graphql';

/** graphql-js's suggestions: ` Did you mean "id"?`, ` Did you mean "a", "b", or "c"?`, ` Did you mean to use an inline fragment on "User"?`. */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/**
 * `error` without graphql-js's "Did you mean …" suggestions, which name fields, arguments, types and
 * enum values of the schema: with introspection disabled they would let a client map the schema by
 * guessing (Apollo Server and graphql-armor strip them the same way).
 */
export function withoutSuggestions<E extends GraphQLError>(error: E): E | GraphQLError {
  SUGGESTION.lastIndex = 0;
  if (!SUGGESTION.test(error.message)) return error;
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    nodes: error.nodes, source: error.source, positions: error.positions, path: error.path,
    originalError: error.originalError, extensions: error.extensions,
  });
}

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GraphQLError } from 'graphql';
import { withoutSuggestions } from './suggestions.js';

describe('when a message suggests names of the schema', () => {
  for (const [message, expected] of [
    ['Cannot query field "helo" on type "Query". Did you mean "hello"?', 'Cannot query field "helo" on type "Query".'],
    ['Unknown type "Bok". Did you mean "Book", "BookInput", or "Boolean"?', 'Unknown type "Bok".'],
    ['Cannot query field "name" on type "Node". Did you mean to use an inline fragment on "User"?', 'Cannot query field "name" on type "Node".'],
    ['Variable "$i" got invalid value { titl: "x" }; Field "titl" is not defined by type "BookInput". Did you mean "title"?',
      'Variable "$i" got invalid value { titl: "x" }; Field "titl" is not defined by type "BookInput".'],
  ]) {
    it(`should remove the suggestion from: ${message}`, () => {
      const err = withoutSuggestions(new GraphQLError(message!, { extensions: { code: 'X' } }));
      assert.equal(err.message, expected);
      assert.deepEqual(err.extensions, { code: 'X' });
    });
  }
  it('should return a message without suggestions as it is', () => {
    const err = new GraphQLError('Query depth 9 exceeds the limit of 8');
    assert.equal(withoutSuggestions(err), err);
  });
});

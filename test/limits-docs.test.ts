/**
 * docs/workers-and-limits.md's limits table against the protocol records: every `max_*` key of
 * AsyncApiConfig, JsonRpcConfig and GrpcConfig, and every limit of the GraphQL schema records, has a
 * row (a limit added to lib/records/ fails here until it is documented with its default).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { AsyncApiConfig, GrpcConfig, JsonRpcConfig } from '../lib/records/protocol.js';
import { DynamicSchemaConfig, SchemaConfig } from '../lib/records/graphql.js';

const page = readFileSync(new URL('../docs/workers-and-limits.md', import.meta.url), 'utf8');
/** The first cells of the table under `## Limits and their defaults`. */
const settings = (/\n## Limits and their defaults\n([\s\S]*?)(?=\n## |$)/.exec(page)?.[1] ?? '')
  .split('\n')
  .filter((line) => line.startsWith('| ') && !line.startsWith('| Setting'))
  .map((line) => line.split('|')[1]!);

describe('when docs/workers-and-limits.md lists the limits', () => {
  it('should find the table', () => assert.ok(settings.length >= 10, `${settings.length} rows`));

  for (const [prefix, record] of [['asyncapi', AsyncApiConfig], ['jsonrpc', JsonRpcConfig], ['grpc', GrpcConfig]] as const) {
    it(`should have a row for every max_ key of ${prefix}`, () => {
      const keys = Object.keys(record.fields).filter((k) => k.startsWith('max_'));
      assert.ok(keys.length > 0);
      assert.deepEqual(keys.filter((k) => !settings.some((s) => s.includes(`\`${prefix}.${k}\``))), [], 'add rows for these keys');
    });
  }

  it('should have a row for every limit of the GraphQL schema records', () => {
    const keys = [...Object.keys(SchemaConfig.fields), ...Object.keys(DynamicSchemaConfig.fields)].filter((k) => /limit|max_/.test(k));
    const aliases: Record<string, string> = { max_depth: 'depth_limit', max_complexity: 'complexity_limit' };
    assert.deepEqual(keys.filter((k) => !settings.some((s) => s.includes('GraphQL') && s.includes(`\`${aliases[k] ?? k}\``))), [], 'add rows for these keys');
  });
});

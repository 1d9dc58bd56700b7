/**
 * graphql-http's GraphQL-over-HTTP audit suite against keel's GraphQL route, served by an App.
 * Every MUST audit is a test of its own; SHOULD and MAY results are logged (test diagnostics), with
 * the ones keel knowingly departs from explained in docs/graphql.md ("GraphQL over HTTP audit").
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits, type AuditResult } from 'graphql-http';
import { App } from '../app/app.js';
import type { ServerHandle } from '../server/server.js';

let handle: ServerHandle;
const url = () => `${handle.url}/graphql`;
const audits = serverAudits({ url, fetchFn: fetch });
const results = new Map<string, AuditResult>();

describe('when graphql-http audits the GraphQL route', () => {
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    app.registerGraphqlRoute('/graphql', 'POST', 'query_mutation', {});
    handle = await app.listen();
  });
  after(async () => {
    await handle.close();
  });

  for (const audit of audits.filter((a) => a.name.startsWith('MUST'))) {
    it(`should pass ${audit.id}: ${audit.name}`, async () => {
      const result = await audit.fn();
      results.set(audit.id, result);
      assert.equal(result.status, 'ok', 'reason' in result ? result.reason : '');
    });
  }

  it('should report every SHOULD and MAY audit', async (t) => {
    const optional = audits.filter((a) => !a.name.startsWith('MUST'));
    assert.ok(optional.length > 0, 'the suite has SHOULD/MAY audits');
    const lines: string[] = [];
    for (const audit of optional) {
      const result = await audit.fn();
      results.set(audit.id, result);
      const detail = result.status === 'ok' ? '' : ` (${'reason' in result ? result.reason : ''})`;
      lines.push(`${result.status.padEnd(6)} ${audit.id} ${audit.name}${detail}`);
    }
    const notOk = lines.filter((l) => !l.startsWith('ok'));
    t.diagnostic(`SHOULD/MAY audits: ${optional.length - notOk.length} ok, ${notOk.length} not ok`);
    for (const line of notOk) t.diagnostic(line);
    assert.equal(results.size, audits.length);
  });
});

/**
 * Another implementation serving protocol cases from the manifest alone (`--exec`): a JSON-RPC
 * server written against docs/conformance.md's "Other protocols", given only `protocols[].server`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execTarget } from '../exec.js';
import { runCases } from '../runner.js';
import { casesOf } from './testkit.js';

const SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
const [file, port] = process.argv.slice(2);
const { protocols } = JSON.parse(readFileSync(file, 'utf8'));
const { endpoint, methods } = protocols[0].server;
const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
function answer(call) {
  if (typeof call !== 'object' || call === null || call.jsonrpc !== '2.0' || typeof call.method !== 'string') return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null };
  const m = methods.find((x) => x.name === call.method);
  const reply = m ? m.answers.find((a) => same(a.params, call.params)) : undefined;
  if (!('id' in call)) return undefined;
  if (!m) return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: call.id };
  if (reply?.error) return { jsonrpc: '2.0', error: reply.error, id: call.id };
  return { jsonrpc: '2.0', result: reply && 'result' in reply ? reply.result : {}, id: call.id };
}
createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d)).on('end', () => {
    if (req.url !== endpoint) return res.writeHead(404).end();
    let parsed;
    try { parsed = JSON.parse(body); } catch { return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null })); }
    const out = Array.isArray(parsed) ? parsed.map(answer).filter(Boolean) : answer(parsed);
    if (out === undefined || (Array.isArray(out) && !out.length)) return res.writeHead(204).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  });
}).listen(Number(port), '127.0.0.1');
`;

describe('when --exec serves protocol cases from the manifest', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-exec-protocols-'));
    writeFileSync(join(dir, 'server.mjs'), SERVER);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should start one server per case with that case in protocols, and pass what it answers right', async () => {
    const cases = casesOf({
      name: 'm', method: 'user.get', endpoint: '/api/rpc',
      examples: [{ name: 'found', params: { id: 'u1' }, result: { name: 'Ada' } }],
      error_cases: [{ name: 'missing', params: { id: 'zz' }, error: { code: 404, message: 'User not found' } }, { name: 'broken', raw_request: '{"jsonrpc": "2.0", "method"', error: { code: -32700, message: 'Parse error' } }],
    }, 'jsonrpc');
    const log = join(dir, 'starts.log');
    const exec = execTarget(cases, { command: `echo {case_file} >> ${log}; exec "${process.execPath}" ${join(dir, 'server.mjs')} {case_file} {port}` });
    try {
      const report = await runCases(exec.order, { target: exec.target, timeoutMs: 5000 });
      assert.deepEqual(report.results.map((r) => [r.id, r.status, r.error ?? r.mismatches]), cases.map((c) => [c.id, 'passed', []]));
      assert.equal(exec.launches(), 3);
    } finally {
      await exec.close();
    }
    assert.equal(readFileSync(log, 'utf8').trim().split('\n').length, 3);
  });
});

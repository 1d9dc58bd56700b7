import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isExpectedNetworkError, NetworkErrorLog } from './net-errors.js';

const err = (code: string) => Object.assign(new Error(code), { code });

describe('when an error is classified', () => {
  it('should call a lost client expected and anything else not', () => {
    for (const code of ['EPIPE', 'ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']) assert.equal(isExpectedNetworkError(err(code)), true, code);
    assert.equal(isExpectedNetworkError(new Error('WebSocket is not open: readyState 2 (CLOSING)')), true);
    for (const other of [err('ENOENT'), new TypeError('x'), 'EPIPE', null, undefined]) assert.equal(isExpectedNetworkError(other), false, String(other));
  });
});

describe('when many clients are lost within one interval', () => {
  it('should write the first at once, then one line per code with the count', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = new NetworkErrorLog({ debug: (obj: Record<string, unknown>) => void lines.push(obj) } as never, 50);
    for (let i = 0; i < 100; i++) log.note('graphql-ws', err('EPIPE'));
    for (let i = 0; i < 7; i++) log.note('graphql-ws', err('ECONNRESET'));
    assert.deepEqual(lines, [{ where: 'graphql-ws', code: 'EPIPE', count: 1 }]);
    await new Promise((r) => setTimeout(r, 120));
    assert.deepEqual(lines.slice(1), [
      { where: 'graphql-ws', code: 'EPIPE', count: 99, interval_ms: 50 },
      { where: 'graphql-ws', code: 'ECONNRESET', count: 7, interval_ms: 50 },
    ]);
  });
});

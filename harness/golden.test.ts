import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectSnapshot, serializeSnapshot } from './golden.js';
import { snapshotFromParts } from './snapshot.js';

const ID = '0b7e3f4c-9d2a-4e1b-8c3d-5f6a7b8c9d0e';

function sample(extra: Record<string, string> = {}, body = JSON.stringify({ id: ID, b: 1, a: [2, { z: 1, y: 2 }] })) {
  return snapshotFromParts({
    status: 201,
    headers: { 'X-Request-ID': ID, Date: 'Sat, 21 Nov 2026 22:00:00 GMT', 'Content-Type': 'application/json', ETag: '"abc"', ...extra },
    body: Buffer.from(body),
  });
}

describe('serializeSnapshot', () => {
  describe('when not normalising', () => {
    it('should sort headers and JSON keys and keep every value', () => {
      const out = JSON.parse(serializeSnapshot(sample()));
      assert.deepEqual(Object.keys(out.headers), ['content-type', 'date', 'etag', 'x-request-id']);
      assert.equal(out.headers['x-request-id'], ID);
      assert.deepEqual(Object.keys(out.body.json), ['a', 'b', 'id']);
      assert.deepEqual(Object.keys(out.body.json.a[1]), ['y', 'z']);
    });
  });

  describe('when normalising', () => {
    it('should replace volatile headers and UUIDs by tokens', () => {
      const out = JSON.parse(serializeSnapshot(sample({ 'X-Trace': `id=${ID}` }), { normalize: true }));
      assert.equal(out.headers.date, '<<volatile>>');
      assert.equal(out.headers.etag, '<<volatile>>');
      assert.equal(out.headers['x-request-id'], '<<volatile>>');
      assert.equal(out.headers['x-trace'], 'id=<<uuid>>');
      assert.equal(out.body.json.id, '<<uuid>>');
      assert.equal(out.headers['content-type'], 'application/json');
    });

    it('should apply custom volatile headers and replacements', () => {
      const out = JSON.parse(
        serializeSnapshot(sample({ 'X-Time': '12ms' }, 'took 12ms'), { normalize: { volatileHeaders: ['x-time'], uuids: false, replace: [[/\d+ms/g, '<<ms>>']] } }),
      );
      assert.equal(out.headers['x-time'], '<<volatile>>');
      assert.equal(out.headers['x-request-id'], ID);
      assert.equal(out.headers.date, 'Sat, 21 Nov 2026 22:00:00 GMT');
    });
  });

  describe('when the body is not JSON', () => {
    it('should keep UTF-8 text as text', () => {
      const snap = snapshotFromParts({ status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('héllo') });
      assert.deepEqual(JSON.parse(serializeSnapshot(snap)).body, { text: 'héllo' });
    });

    it('should write binary bodies as base64', () => {
      const snap = snapshotFromParts({ status: 200, headers: {}, body: Buffer.from([0xff, 0x00, 0xfe]) });
      assert.deepEqual(JSON.parse(serializeSnapshot(snap)).body, { base64: '/wD+' });
    });

    it('should write an empty body as null', () => {
      const snap = snapshotFromParts({ status: 204, headers: {}, body: Buffer.alloc(0) });
      assert.equal(JSON.parse(serializeSnapshot(snap)).body, null);
    });
  });
});

describe('expectSnapshot', () => {
  let dir: string;
  let saved: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-golden-'));
    saved = process.env.UPDATE_SNAPSHOTS;
    delete process.env.UPDATE_SNAPSHOTS;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.UPDATE_SNAPSHOTS;
    else process.env.UPDATE_SNAPSHOTS = saved;
  });

  describe('when the golden file is missing', () => {
    it('should fail and say how to create it', () => {
      const file = join(dir, 'a.json');
      assert.throws(() => expectSnapshot(sample(), file), /UPDATE_SNAPSHOTS=1/);
      assert.equal(existsSync(file), false);
    });
  });

  describe('when UPDATE_SNAPSHOTS=1', () => {
    it('should write the normalised snapshot, creating folders', () => {
      process.env.UPDATE_SNAPSHOTS = '1';
      const file = join(dir, 'nested', 'a.json');
      expectSnapshot(sample(), file);
      assert.match(readFileSync(file, 'utf8'), /"x-request-id": "<<volatile>>"/);
    });
  });

  describe('when the golden file exists', () => {
    it('should pass for a response that differs only in volatile values', () => {
      const file = join(dir, 'a.json');
      writeFileSync(file, serializeSnapshot(sample(), { normalize: true }));
      expectSnapshot(sample({ Date: 'Sun, 22 Nov 2026 00:00:00 GMT', 'X-Request-ID': '11111111-2222-4333-8444-555555555555' }), file);
    });

    it('should fail with a diff for a changed status', () => {
      const file = join(dir, 'a.json');
      writeFileSync(file, serializeSnapshot(sample(), { normalize: true }));
      const changed = { ...sample(), status: 200 };
      assert.throws(() => expectSnapshot(changed, file), (err: unknown) => err instanceof assert.AssertionError && /Snapshot differs/.test(err.message));
    });
  });
});

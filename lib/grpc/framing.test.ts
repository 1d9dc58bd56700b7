import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageDecoder, MessageTooLargeError, frameMessage, parseGrpcTimeout } from './framing.js';
import { decodeGrpcMessage, encodeGrpcMessage, statusFromError, GrpcError, GrpcStatus, UNKNOWN_ERROR_MESSAGE } from './status.js';
import { HttpError } from '../http/errors.js';

describe('when messages arrive split across chunks', () => {
  it('should reassemble them fed one byte at a time', () => {
    const wire = Buffer.concat([frameMessage(Buffer.from('hello'), false), frameMessage(Buffer.alloc(0), false), frameMessage(Buffer.from('x'), true)]);
    const d = new MessageDecoder(100);
    const out = [...wire].flatMap((b) => d.push(Buffer.from([b])));
    assert.deepEqual(out.map((m) => [m.compressed, m.data.toString()]), [[false, 'hello'], [false, ''], [true, 'x']]);
    assert.equal(d.partial, false);
  });

  it('should report a message cut short', () => {
    const d = new MessageDecoder(100);
    d.push(frameMessage(Buffer.from('hello'), false).subarray(0, 7));
    assert.equal(d.partial, true);
  });

  it('should reject a message from its prefix alone when it is over the cap', () => {
    const d = new MessageDecoder(4);
    assert.throws(() => d.push(frameMessage(Buffer.from('hello'), false).subarray(0, 5)), (e: unknown) => e instanceof MessageTooLargeError && e.size === 5 && e.limit === 4);
  });
});

describe('when grpc-timeout is parsed', () => {
  const valid: [string, number][] = [['2H', 7_200_000], ['3M', 180_000], ['4S', 4000], ['50m', 50], ['1500u', 1.5], ['2000000n', 2], ['99999999S', 99_999_999_000]];
  for (const [value, ms] of valid) it(`should read ${value} as ${ms} ms`, () => assert.equal(parseGrpcTimeout(value), ms));
  const invalid = ['', '10', 'S', '1s', '1.5S', '-1S', '123456789S', ' 1S', '1 S', '1SS'];
  for (const value of invalid) it(`should ignore ${JSON.stringify(value)}`, () => assert.equal(parseGrpcTimeout(value), undefined));
  it('should give undefined when the header is absent', () => assert.equal(parseGrpcTimeout(undefined), undefined));
});

describe('when a status message is percent-encoded', () => {
  it('should escape %, non-ASCII and control characters and keep the rest', () => {
    assert.equal(encodeGrpcMessage('100% sûr\n'), '100%25 s%C3%BBr%0A');
  });
  it('should decode what it encoded', () => {
    for (const m of ['plain', '100%', 'ünïcödé ✓', 'tab\there']) assert.equal(decodeGrpcMessage(encodeGrpcMessage(m)), m);
  });
  it('should keep a malformed escape as it is', () => {
    assert.equal(decodeGrpcMessage('50%zz'), '50%zz');
  });
});

describe('when a thrown value is mapped to a status', () => {
  it('should keep a GrpcError', () => assert.deepEqual(statusFromError(new GrpcError(5, 'gone')), { code: 5, message: 'gone', metadata: {} }));
  it('should keep a grpc-js style error', () => assert.deepEqual(statusFromError(Object.assign(new Error('x'), { code: 7, details: 'nope' })), { code: 7, message: 'nope' }));
  it('should map an HttpError 401 to UNAUTHENTICATED with its detail', () => assert.deepEqual(statusFromError(new HttpError(401, 'who?')), { code: GrpcStatus.UNAUTHENTICATED, message: 'who?' }));
  it('should hide the detail of a 5xx HttpError', () => assert.deepEqual(statusFromError(new HttpError(503, 'db at 10.0.0.3 down')), { code: GrpcStatus.UNAVAILABLE, message: UNKNOWN_ERROR_MESSAGE }));
  it('should hide a system error with a string code', () => assert.deepEqual(statusFromError(Object.assign(new Error('ECONNREFUSED 10.0.0.3'), { code: 'ECONNREFUSED' })), { code: GrpcStatus.UNKNOWN, message: UNKNOWN_ERROR_MESSAGE }));
  it('should hide a plain Error', () => assert.deepEqual(statusFromError(new Error('secret')), { code: GrpcStatus.UNKNOWN, message: UNKNOWN_ERROR_MESSAGE }));
});

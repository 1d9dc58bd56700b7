import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compression, isCompressible, isCompressibleByRecord, type CompressionConfigInput } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';

describe('isCompressible', () => {
  it('should accept text, JSON, problem+json, XML, JavaScript and SVG', () => {
    for (const t of ['text/plain', 'text/html; charset=utf-8', 'application/json', 'application/problem+json', 'application/xml', 'text/javascript', 'image/svg+xml', 'application/x-ndjson']) {
      assert.equal(isCompressible(t), true, t);
    }
  });

  it('should refuse event streams, compressed media and missing types', () => {
    for (const t of ['text/event-stream', 'text/event-stream; charset=utf-8', 'image/png', 'application/zip', 'application/octet-stream', 'video/mp4', undefined, 42]) {
      assert.equal(isCompressible(t), false, String(t));
    }
  });
});

describe('isCompressibleByRecord', () => {
  it('should accept every type but gRPC, images other than SVG and event streams, and a missing type', () => {
    for (const t of ['application/octet-stream', 'application/zip', 'video/mp4', 'text/plain', 'image/svg+xml', 'image/svg+xml; charset=utf-8', undefined]) {
      assert.equal(isCompressibleByRecord(t), true, String(t));
    }
  });

  it('should refuse gRPC, raster images and event streams', () => {
    for (const t of ['application/grpc', 'application/grpc+proto', 'image/png', 'image/x-icon', 'text/event-stream; charset=utf-8', 42]) {
      assert.equal(isCompressibleByRecord(t), false, String(t));
    }
  });
});

describe('compression: when the options are invalid', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown key, with a suggestion', { min_sise: 10 }, /Unknown key "min_sise".*Did you mean "min_size"/],
    ['quality above 11', { quality: 12 }, /CompressionConfig\.quality: expected an integer from 0 to 11, got 12/],
    ['a negative quality', { quality: -1 }, /expected an integer from 0 to 11, got -1/],
    ['a fractional quality', { quality: 4.5 }, /got 4.5/],
    ['gzip as a string', { gzip: 'yes' }, /CompressionConfig\.gzip: expected true or false, got "yes"/],
    ['brotli as a number', { brotli: 1 }, /CompressionConfig\.brotli: expected true or false, got 1/],
    ['a negative min_size', { min_size: -1 }, /min_size: expected an integer >= 0, got -1/],
    ['min_size as a string', { min_size: '1kb' }, /got "1kb"/],
    ['a number', 5, /expected an object/],
  ];
  for (const [what, input, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => compression(input as CompressionConfigInput), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});

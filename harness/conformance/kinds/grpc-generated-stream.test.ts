import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generatedStream, MAX_GENERATED_STREAM } from './grpc-generated-stream.js';
import { casesOf, run } from './testkit.js';

const input = { fields: [{ name: 'batch_id', type: 'string' }, { name: 'n', type: 'int32' }, { name: 'v', type: 'float' }, { name: 'ts', type: 'int64' }] };

describe('gRPC request streams given as a count and a rule', () => {
  describe('when the rule names field ranges', () => {
    it('should step each named field evenly from first to last, whole numbers for integer fields', () => {
      assert.deepEqual(generatedStream(3, 'Sequential: n=[0..99], v=[0.5..1.5]', input), [{ n: 0, v: 0.5 }, { n: 50, v: 1 }, { n: 99, v: 1.5 }]);
    });
    it('should leave out fields it does not know and ranges that are not two numbers', () => {
      assert.deepEqual(generatedStream(2, 'Rapid: ts=[base..base+100ms], other=[1..2], v=[1..2]', input), [{ v: 1 }, { v: 2 }]);
    });
    it('should give one message its first value', () => {
      assert.deepEqual(generatedStream(1, 'n=[5..9]', input), [{ n: 5 }]);
    });
  });

  describe('when the count cannot be generated', () => {
    it('should say why', () => {
      for (const size of [0, -1, 2.5, '10', undefined, MAX_GENERATED_STREAM + 1]) {
        const r = generatedStream(size, 'n=[0..1]', input);
        assert.ok(!Array.isArray(r) && /stream_size/.test(r.skip), JSON.stringify(size));
      }
    });
  });

  describe('when a client-streaming case is played against keel', () => {
    const doc = (size: number) => ({
      protobuf: { package: 't.v1', messages: [{ name: 'Item', fields: [{ name: 'n', type: 'int32', number: 1 }] }, { name: 'Sum', fields: [{ name: 'count', type: 'int32', number: 1 }] }], services: [{ name: 'S', methods: [{ name: 'Add', input_type: 'Item', output_type: 'Sum', client_streaming: true }] }] },
      handler: { service: 't.v1.S', method: 'Add' },
      request: { metadata: {}, stream_size: size, stream_generator: 'n=[1..' + size + ']' },
      expected_response: { status_code: 'OK', message: { count: size } },
    });
    it('should send the generated messages and pass', async () => {
      const [c] = casesOf(doc(20), 'protobuf');
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });
    it('should fail when the server expects another stream', async () => {
      const [c] = casesOf(doc(20), 'protobuf');
      const r = await run(c!, casesOf(doc(21), 'protobuf')[0]!);
      assert.equal(r.status, 'failed');
    });
  });
});

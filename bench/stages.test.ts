import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attribute, classifyStack, findProfile, normaliseUrl, readProfile, FALLBACK, STARTUP, type Frame } from './stages.js';

const fixture = (name: string) => join(dirname(fileURLToPath(import.meta.url)), 'fixtures', `${name}.cpuprofile.json`);
const frame = (name: string, url = ''): Frame => ({ name, url, line: 1 });

describe('when a frame url is normalised', () => {
  it('should treat the compiled benchmark build as keel source, not a dependency', () => {
    assert.equal(normaliseUrl('file:///srv/app/node_modules/.cache/keel-bench/lib/app/pipeline.js', '/srv/app'), 'lib/app/pipeline.js');
  });
  it('should make keel sources run under tsx relative to the repository', () => {
    assert.equal(normaliseUrl('file:///srv/app/middleware/cors/index.ts', '/srv/app'), 'middleware/cors/index.ts');
  });
  it('should name a dependency from its innermost node_modules folder', () => {
    assert.equal(normaliseUrl('file:///srv/app/node_modules/fastify/lib/reply.js', '/srv/app'), 'node_modules/fastify/lib/reply.js');
    assert.equal(normaliseUrl('file:///srv/app/node_modules/.pnpm/a@1/node_modules/find-my-way/index.js', '/srv/app'), 'node_modules/find-my-way/index.js');
  });
  it('should leave node builtins and native code as they are', () => {
    assert.equal(normaliseUrl('node:_http_server'), 'node:_http_server');
    assert.equal(normaliseUrl(''), '');
  });
});

describe('when a stack is classified', () => {
  // [expected stage, stack from the sampled frame down]
  const cases: [string, Frame[]][] = [
    ['socket I/O', [frame('writev'), frame('writevGeneric', 'node:internal/stream_base_commons')]],
    ['HTTP parsing/writing', [frame('parserOnHeadersComplete', 'node:_http_common')]],
    ['GC', [frame('(garbage collector)')]],
    ['V8 (program)', [frame('(program)')]],
    ['validation', [frame('validate12'), frame('validateRequest', 'lib/http/validation.js')]],
    ['validation', [frame('RegExp: ^[A-Z]{2}$'), frame('validate3'), frame('run', 'lib/app/pipeline.js')]],
    ['body reading/parsing', [frame('parseJson', 'lib/http/content.js')]],
    ['body reading/parsing', [frame('_parse', 'node_modules/secure-json-parse/index.js')]],
    ['serialisation', [frame('writeContent', 'lib/app/respond.js')]],
    ['serialisation', [frame('serialize', 'node_modules/fastify/lib/reply.js')]],
    ['keel pipeline', [frame('endWith', 'lib/app/respond.ts')]],
    ['routing', [frame('find', 'node_modules/find-my-way/index.js')]],
    ['middleware/rate-limit', [frame('consume', 'middleware/rate-limit/store.js')]],
    ['middleware/compression', [frame('compress', 'node_modules/@fastify/compress/index.js')]],
    ['zlib', [frame('writeSync'), frame('processChunkSync', 'node:zlib')]],
    ['crypto/JWT', [frame('jwtVerify', 'node_modules/jose/dist/node/esm/jwt/verify.js')]],
    ['GraphQL', [frame('execute', 'node_modules/graphql/execution/execute.js')]],
    ['JSON-RPC', [frame('dispatch', 'lib/jsonrpc/dispatch.js')]],
    ['Fastify internals', [frame('handleRequest', 'node_modules/fastify/lib/handle-request.js')]],
    ['Express internals', [frame('next', 'node_modules/router/index.js')]],
    ['idle', [frame('(idle)')]],
    ['URL/query parsing', [frame('parse', 'node_modules/fast-querystring/lib/parse.js'), frame('handleRequest', 'node_modules/fastify/lib/handle-request.js')]],
    ['body reading/parsing', [frame('parse', 'node_modules/fast-querystring/lib/parse.js'), frame('defaultParser', 'node_modules/@fastify/formbody/index.js')]],
    ['file I/O (node:fs)', [frame('close'), frame('close', 'node:fs'), frame('serve', 'middleware/static-files/index.js')]],
    ['middleware/static-files', [frame('onFinished', 'node_modules/on-finished/index.js'), frame('pipe', 'node_modules/send/index.js')]],
    ['Express internals', [frame('vary', 'node_modules/vary/index.js'), frame('handle', 'node_modules/express/lib/application.js')]],
  ];
  for (const [stage, stack] of cases) {
    it(`should put ${stack[0]!.name} ${stack[0]!.url || '(native)'} in ${stage}`, () => assert.equal(classifyStack(stack), stage));
  }
  it('should charge generic node code to the nearest caller that says what the work is', () => {
    const stack = [frame('set length'), frame('Readable.on', 'node:internal/streams/readable'), frame('readRawBody', 'lib/http/body.js'), frame('parserOnIncoming', 'node:_http_server')];
    assert.equal(classifyStack(stack), 'body reading/parsing');
  });
  it('should fall back to the nearest generic JS frame, then to a native one, then to other JS', () => {
    assert.equal(classifyStack([frame('runMicrotasks'), frame('processTicksAndRejections', 'node:internal/process/task_queues')]), 'Node runtime');
    assert.equal(classifyStack([frame('utf8Slice'), frame('(root)')]), 'native (unattributed)');
    assert.equal(classifyStack([frame('emit', 'node:events'), frame('(root)')]), 'Node runtime');
    assert.equal(classifyStack([frame('helper', 'node_modules/left-pad/index.js')]), FALLBACK);
    assert.equal(classifyStack([frame('(root)')]), FALLBACK);
  });
});

describe('when a profile is attributed', () => {
  const st = attribute(readProfile(fixture('keel-hello')), 10, { file: 'keel.cpuprofile' });
  it('should express each stage in µs per request served', () => {
    assert.deepEqual(st.perRequest, {
      'keel pipeline': 35,
      'HTTP parsing/writing': 24,
      validation: 10,
      'socket I/O': 8,
      'middleware/cors': 6,
      GC: 3,
      'V8 (program)': 2,
      'benchmark harness': 1,
    });
    assert.equal(st.busyPerRequest, 89);
    assert.equal(st.requests, 10);
  });
  it('should leave out idle time and report start-up (before the first request, or under the module loader) and shut-down in ms', () => {
    assert.equal(st.startupMs, 2);
    assert.equal(st.shutdownMs, 0.7);
    assert.equal(Object.keys(st.perRequest).includes(STARTUP), false);
    assert.equal(Object.keys(st.perRequest).includes('idle'), false);
  });
  it('should list the heaviest functions with their stage and location', () => {
    assert.deepEqual(st.top[0], { stage: 'keel pipeline', fn: 'run', where: 'lib/app/pipeline.js:41', us: 30 });
    assert.equal(st.top.find((t) => t.fn === 'corsHandler')?.stage, 'middleware/cors');
  });
});

describe('when the profile of a server process is looked up', () => {
  it('should take the main thread of that process only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-stages-'));
    try {
      for (const f of ['CPU.20261122.010000.111.0.001.cpuprofile', 'CPU.20261122.010000.222.1.002.cpuprofile', 'CPU.20261122.010000.222.0.001.cpuprofile', 'notes.txt']) writeFileSync(join(dir, f), '{}');
      assert.equal(findProfile(dir, 222), join(dir, 'CPU.20261122.010000.222.0.001.cpuprofile'));
      assert.equal(findProfile(dir, 333), undefined);
      assert.equal(findProfile(join(dir, 'missing'), 222), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

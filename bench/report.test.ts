import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { median, summarise, type Round, type RunResult, type ScenarioResult } from './stats.js';
import { checkTargets, markdownReport, quickLine } from './report.js';
import { svgChart } from './chart.js';
import { orderOfSize, orderSchema, scenarios } from './scenarios.js';
import { attribute, readProfile } from './stages.js';
import { whereTheTimeGoes, type ProfiledScenario } from './breakdown.js';

const round = (rps: number, cpuPerReq = 50): Round => ({ rps, p50: 1, p99: 5, non2xx: 0, errors: 0, cpuPerReq });

function scenario(id: string, keel: number, fastify: number, extra: Partial<ScenarioResult> = {}): ScenarioResult {
  const k = summarise('keel', [round(keel)], 100 * 1048576, 'VmHWM');
  const f = summarise('fastify', [round(fastify)], 100 * 1048576, 'VmHWM');
  return { id, title: `${id} title`, results: [k, f], na: {}, ratios: { fastify: keel / fastify }, cpuRatios: { fastify: 1 }, rssRatios: { fastify: 1 }, ...extra };
}

function run(scenarios: ScenarioResult[]): RunResult {
  return {
    startedAt: '2026-11-21T23:00:00.000Z',
    finishedAt: '2026-11-21T23:10:00.000Z',
    machine: { nproc: 2, cpu: 'Test CPU', node: 'v20.0.0', os: 'Linux', pinned: true },
    settings: { connections: 32, durationSec: 3, rounds: 1, warmupSec: 1, quick: false },
    scenarios,
  };
}

describe('when rounds are summarised', () => {
  it('should take the median of an odd and of an even number of rounds', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
  it('should report the spread between rounds relative to the median', () => {
    const r = summarise('keel', [round(90), round(100), round(110)], 1, 'ipc');
    assert.equal(r.rps, 100);
    assert.ok(Math.abs(r.spread - 0.2) < 1e-9);
  });
});

describe('when the targets are checked', () => {
  it('should name every scenario where keel is below Fastify', () => {
    const t = checkTargets(run([scenario('hello', 90, 100), scenario('param', 120, 100)]));
    const fastify = t.find((x) => x.name.includes('Fastify req/s'))!;
    assert.equal(fastify.met, false);
    assert.match(fastify.detail, /hello \(0\.90×\)/);
    assert.doesNotMatch(fastify.detail, /param/);
  });
  it('should pass the Fastify target when keel is at least as fast everywhere', () => {
    const t = checkTargets(run([scenario('hello', 100, 100), scenario('param', 120, 100)]));
    assert.equal(t.find((x) => x.name.includes('Fastify req/s'))!.met, true);
  });
  it('should judge the node:http overhead as time per request', () => {
    const hello = (keel: number) => scenario('hello', keel, keel, { ratios: { fastify: 1, node: keel / 100 } });
    const over = (keel: number) => checkTargets(run([hello(keel)])).find((x) => x.name.includes('node:http'))!;
    assert.equal(over(91).met, true); // 100/91 − 1 ≈ 9.9 % more time
    assert.equal(over(90).met, false); // 11.1 %
    assert.equal(over(90).detail, '11% more time per request');
    assert.equal(over(125).detail, '20% less time per request');
  });
});

describe('when a run is rendered', () => {
  const r = run([scenario('hello', 12000, 10000), scenario('full', 5000, 5500, { na: { node: 'no hand-written equivalent' } })]);
  it('should end the quick summary with both ratios', () => {
    assert.equal(quickLine(r), 'keel/fastify hello: 1.20, full: 0.91');
  });
  it('should print n/a when a scenario is missing from the run', () => {
    assert.equal(quickLine(run([scenario('hello', 1, 2)])), 'keel/fastify hello: 0.50, full: n/a');
  });
  it('should put the machine, the ratios and the n/a reasons in the Markdown', () => {
    const md = markdownReport(r);
    assert.match(md, /2 × Test CPU, Node v20\.0\.0/);
    assert.match(md, /\| hello title \| 12,000 ±0% \| 10,000 ±0% \| \*\*1\.20×\*\* \|/);
    assert.match(md, /node:http: no hand-written equivalent \(full\)/);
    assert.match(md, /\*\*missed\*\*: keel ≥ 1\.0× Fastify/);
  });
  it('should draw one labelled row per scenario in a well-formed SVG', () => {
    const svg = svgChart(r);
    assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.equal((svg.match(/<rect x="230"/g) ?? []).length, 4);
    assert.match(svg, />1\.20× Fastify</);
    assert.match(svg, /class="ratio bad">0\.91× Fastify</);
    assert.equal((svg.match(/<text/g) ?? []).length, (svg.match(/<\/text>/g) ?? []).length);
  });
});

describe('when payloads are generated', () => {
  const ajv = new Ajv();
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  const valid = ajv.compile(orderSchema);
  for (const size of [100, 5 * 1024, 150 * 1024]) {
    it(`should produce a valid order of about ${size} bytes`, () => {
      const body = orderOfSize(size);
      assert.ok(body.length >= size && body.length < size + 120, `${body.length} bytes`);
      assert.equal(valid(JSON.parse(body.toString())), true);
    });
  }
  it('should reject the responses a peer must not be timed serving', () => {
    const hello = scenarios('token').find((s) => s.id === 'hello')!;
    assert.equal(hello.check(200, {}, Buffer.from('{"hello":"world"}')), null);
    assert.match(hello.check(404, {}, Buffer.from('{}'))!, /status 404/);
    assert.match(hello.check(200, {}, Buffer.from('<html>'))!, /not JSON/);
    const compress = scenarios('token').find((s) => s.id === 'compress')!;
    assert.match(compress.check(200, {}, Buffer.alloc(100))!, /not gzip/);
  });
});

describe('when a profiled run misses a target', () => {
  // The fixtures are two small synthetic main-thread profiles of 10 requests each (bench/fixtures).
  const fixture = (name: string) => readProfile(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', `${name}.cpuprofile.json`));
  const profiled = (keel: number, fastify: number): ProfiledScenario => ({
    ...scenario('hello', keel, fastify),
    stages: { keel: attribute(fixture('keel-hello'), 10, { file: 'keel.cpuprofile' }), fastify: attribute(fixture('fastify-hello'), 10, { file: 'fastify.cpuprofile' }) },
  });
  it('should list the stages side by side in µs per request, largest differences first', () => {
    const [b] = whereTheTimeGoes(run([profiled(9000, 10000)]));
    assert.equal(b!.reference, 'fastify');
    assert.deepEqual(b!.rows.slice(0, 4).map((r) => [r.stage, r.delta.fastify]), [
      ['keel pipeline', 35],
      ['Fastify internals', -10],
      ['middleware/cors', 6],
      ['validation', 4],
    ]);
    assert.deepEqual(b!.busy, { keel: 89, fastify: 58 });
    // 0.90× at 50 µs of CPU per request: 10% of it must go.
    assert.ok(Math.abs(b!.misses[0]!.saveUs - 5) < 1e-9);
  });
  it('should add the section to the Markdown, with the stages keel spends more on named first', () => {
    const md = markdownReport(run([profiled(9000, 10000), profiled(12000, 10000)]));
    assert.match(md, /\*\*missed\*\*: keel ≥ 1\.0× Fastify req\/s on every scenario: below on hello \(0\.90×\) — see "Where the time goes" below/);
    assert.match(md, /\n### Where the time goes\n/);
    assert.equal((md.match(/^#### /gm) ?? []).length, 1);
    assert.match(md, /#### hello: keel 0\.90× Fastify 5 \(target ≥ 1\.00×\)/);
    assert.match(md, /keel must spend ≈ 5\.0 µs less CPU per request \(of 50\.0 µs measured\)\. keel spends more than Fastify 5 on: keel pipeline \+35\.0 µs, middleware\/cors \+6\.0 µs, validation \+4\.0 µs; less/);
    assert.match(md, /less on: Fastify internals −10\.0 µs, serialisation −3\.0 µs\./);
    assert.match(md, /\| stage \| keel \| Fastify 5 \| Δ vs Fastify 5 \|\n\|---\|---:\|---:\|---:\|\n\| keel pipeline \| 35\.0 \| 0\.0 \| \+35\.0 \|/);
    assert.match(md, /\| \*\*main thread, profiled\*\* \| 89\.0 \| 58\.0 \| \+31\.0 \|/);
    assert.match(md, /keel's heaviest functions there \(µs\/request\): keel pipeline: `run` lib\/app\/pipeline\.js:41 30\.0, `Readable\.on` node:internal\/streams\/readable:1101 5\.0; middleware\/cors/);
    assert.match(md, /Start-up \(once per process, not per request\): keel 2\.0 ms, Fastify 5 0\.8 ms\./);
  });
  it('should leave the section out when every target is met', () => {
    const md = markdownReport(run([profiled(12000, 10000)]));
    assert.doesNotMatch(md, /Where the time goes/);
    assert.deepEqual(whereTheTimeGoes(run([profiled(12000, 10000)])), []);
  });
  it('should give the command that profiles the missed scenarios when the run was not profiled', () => {
    const md = markdownReport(run([scenario('hello', 9000, 10000), scenario('param', 9000, 10000), scenario('query', 12000, 10000)]));
    assert.match(md, /below on hello \(0\.90×\), param \(0\.90×\) — where the time goes: `npm run bench -- --scenarios hello,param --peers keel,fastify,node --profile`/);
    assert.doesNotMatch(md, /### Where the time goes/);
  });
  it('should point the node:http target at a keel and node:http profile of hello', () => {
    const hello = scenario('hello', 80, 80, { ratios: { fastify: 1, node: 0.8 } });
    const t = checkTargets(run([hello])).find((x) => x.name.includes('node:http'))!;
    assert.equal(t.hint, 'where the time goes: `npm run bench -- --scenarios hello --peers keel,node --profile`');
  });
});

describe('when the express-kit scenario ran', () => {
  function kit(bare: number, packages: number, keel: number): ScenarioResult {
    const r = (peer: 'express' | 'express-std' | 'express-keel', cpu: number) => summarise(peer, [round(1000, cpu)], 100 * 1048576, 'VmHWM');
    return { id: 'express-kit', title: 'kit', results: [r('express', bare), r('express-std', packages), r('express-keel', keel)], na: {}, ratios: {}, cpuRatios: {}, rssRatios: {} };
  }
  it("should compare the CPU each stack adds over bare Express 5 and meet the target at ≤ 0.5× the packages'", () => {
    const t = checkTargets(run([kit(40, 100, 70)])).find((x) => x.name.includes('express-kit'))!;
    assert.equal(t.met, true);
    assert.match(t.detail, /packages \+60\.0 µs\/request over bare Express 5, keel's factories \+30\.0 µs \(0\.50×\)/);
  });
  it('should miss the target above 0.5× and say how to profile', () => {
    const t = checkTargets(run([kit(40, 100, 84)])).find((x) => x.name.includes('express-kit'))!;
    assert.equal(t.met, false);
    assert.match(t.hint!, /--scenarios express-kit --peers express,express-std,express-keel --profile/);
  });
});

describe('when the express-engine scenarios ran', () => {
  function engine(id: string, cpu: Partial<Record<'express' | 'keel-express' | 'express4' | 'keel-express4' | 'fastify', number>>): ScenarioResult {
    const results = Object.entries(cpu).map(([peer, us]) => summarise(peer as 'express', [round(1000, us!)], 100 * 1048576, 'VmHWM'));
    const keel = cpu['keel-express']!;
    const cpuRatios = Object.fromEntries(Object.entries(cpu).filter(([p]) => p !== 'keel-express').map(([p, us]) => [p, us! / keel]));
    const rssRatios = Object.fromEntries(Object.keys(cpuRatios).map((p) => [p, 1]));
    return { id, title: id, results, na: {}, ratios: {}, cpuRatios, rssRatios };
  }
  it("should meet issue 48's bar at ≤ 1.05× Fastify's CPU per request on the app, and miss it above", () => {
    const at = (keel: number) => checkTargets(run([engine('express-engine', { 'keel-express': keel, fastify: 40, express: 300 })])).find((x) => x.name.includes('Fastify'))!;
    assert.equal(at(42).met, true);
    assert.match(at(42).detail, /1\.05× Fastify's CPU per request/);
    assert.equal(at(43).met, false);
    assert.match(at(43).hint!, /--scenarios express-engine --peers keel-express,fastify --profile/);
  });
  it('should hold keel/express4 to the same bar against Express 4, when both ran', () => {
    const checks = checkTargets(run([engine('express-engine-hello', { 'keel-express': 40, express: 200, 'keel-express4': 40, express4: 190 })]));
    const t = checks.find((x) => x.name.includes('keel/express4'))!;
    assert.equal(t.met, false);
    assert.match(t.detail, /4\.75× less CPU per request \(40 vs 190 µs\)/);
    assert.equal(checks.find((x) => x.name.startsWith('keel/express ≥'))!.met, true);
    assert.equal(checkTargets(run([engine('express-engine-hello', { 'keel-express': 40, express: 200 })])).some((x) => x.name.includes('keel/express4')), false);
  });
});

describe("when issue 48's scenarios ran against Fastify", () => {
  function vsFastify(id: string, keel: number, fastify: number): ScenarioResult {
    const results = [summarise('keel', [round(1000, keel)], 100 * 1048576, 'VmHWM'), summarise('fastify', [round(1000, fastify)], 100 * 1048576, 'VmHWM')];
    return { id, title: id, results, na: {}, ratios: { fastify: 1 }, cpuRatios: { fastify: fastify / keel }, rssRatios: { fastify: 1 } };
  }
  it("should hold the default stack to half of Fastify + plugins' CPU (1.9×) and say how to profile a miss", () => {
    const at = (keel: number) => checkTargets(run([vsFastify('full', keel, 38)])).find((x) => x.name.includes('(full)'))!;
    assert.equal(at(20).met, true);
    assert.equal(at(21).met, false);
    assert.match(at(21).hint!, /--scenarios full --peers keel,fastify --profile/);
  });
  it("should hold keel's 422 to 1.05× Fastify's 400", () => {
    const at = (keel: number) => checkTargets(run([vsFastify('json-invalid', keel, 20)])).find((x) => x.name.includes('json-invalid'))!;
    assert.equal(at(21).met, true);
    assert.equal(at(21.5).met, false);
    assert.match(at(21.5).detail, /keel at 1\.07× Fastify's/);
  });
  it("should hold keel's 404, 405 and 413 problems and its schema'd answer to Fastify's CPU per request", () => {
    for (const id of ['problem', 'method-not-allowed', 'too-large', 'response-schema']) {
      const at = (keel: number) => checkTargets(run([vsFastify(id, keel, 20)])).find((x) => x.name.includes(`(${id})`))!;
      assert.equal(at(20).met, true, id);
      assert.equal(at(20.5).met, false, id);
      assert.match(at(20.5).hint!, new RegExp(`--scenarios ${id} --peers keel,fastify --profile`));
    }
  });
});

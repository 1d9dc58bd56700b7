// keel:integration
/**
 * The operator assets keel ships (operations/): the Prometheus alert rules pass promtool's checks and
 * unit tests, and every query of the Grafana dashboard runs on real Prometheus against a keel App under
 * traffic (requests 200/404/429/500/503, a Redis-backed rate limit, BullMQ jobs, RedisPubSub events, a
 * Redis outage) and returns data for what that traffic made. A metric renamed in keel fails here.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { NO_PROMETHEUS, NO_PROMTOOL, PROMTOOL, startPrometheus, type PrometheusServer } from './helpers/prometheus.js';
import { NO_REDIS, startRedis, type RedisServer } from './helpers/redis-server.js';
import { startObservedApp, type ObservedApp } from './helpers/observed-app.js';

const path = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const RULES = path('operations/prometheus-alerts.yml');
const RULE_TESTS = path('operations/prometheus-alerts.test.yml');
const DASHBOARD = path('operations/grafana-dashboard.json');
const INHIBIT = path('operations/alertmanager-inhibit.yml');

interface Rule { alert: string; record?: string; expr: string; for?: string; keep_firing_for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
interface Target { expr: string; refId: string; datasource?: { uid?: string } }
interface Panel { type: string; title: string; datasource?: { type?: string; uid?: string }; targets?: Target[] }
interface Variable { name: string; type: string; query: string | { query: string }; allValue?: string }

const allRules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
/** The alerts (the rest are the recording rules they read). */
const rules = allRules.filter((r) => r.alert);
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; title: string; panels: Panel[]; templating: { list: Variable[] } };
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));

/** GitHub's anchor of a Markdown heading. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
/** Metric names an expression reads (keel's own and prom-client's process metrics), not recording rules' (`job:keel_…:rate1h`). */
const metricNames = (expr: string) => [...expr.matchAll(/(?<![:\w])(?:keel|process|nodejs)_[a-z0-9_]+(?![:\w])/g)].map((m) => m[0]);
/** What the alerts read through the recording rules, too. */
const readBy = (r: Rule): string[] => [...metricNames(r.expr), ...allRules.filter((x) => x.record && r.expr.includes(x.record)).flatMap(readBy)];

/** A dashboard expression as Grafana sends it: variables replaced by the values of a run of `job`. */
function substitute(expr: string, job: string, rateInterval = '5s'): string {
  return expr.replaceAll('$__rate_interval', rateInterval).replaceAll('$job', job).replaceAll('$instance', '.*');
}

describe('when promtool checks the alert rules', { skip: NO_PROMTOOL }, () => {
  const promtool = (...args: string[]) => spawnSync(PROMTOOL, args, { encoding: 'utf8', cwd: path('operations'), timeout: 60_000 });

  it('should find them valid (promtool check rules)', () => {
    const r = promtool('check', 'rules', RULES);
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`SUCCESS: ${allRules.length} rules found`));
  });

  it('should fire each alert on the series that should trigger it and keep it quiet otherwise (promtool test rules)', () => {
    const r = promtool('test', 'rules', RULE_TESTS);
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /SUCCESS/);
  });
});

const AMTOOL = spawnSync('amtool', ['--version']).status === 0 ? 'amtool' : undefined;

describe('when amtool checks the inhibit rules', { skip: AMTOOL ? false : 'amtool is not installed (apt-get install prometheus-alertmanager)' }, () => {
  it('should find them a valid Alertmanager configuration, naming only alerts the rules define', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-am-'));
    const file = join(dir, 'alertmanager.yml');
    writeFileSync(file, `route:\n  receiver: pager\n  group_by: [job]\nreceivers:\n  - name: pager\n${readFileSync(INHIBIT, 'utf8')}`);
    const r = spawnSync(AMTOOL!, ['check-config', file], { encoding: 'utf8', timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /4 inhibit rules/);
    for (const name of readFileSync(INHIBIT, 'utf8').matchAll(/alertname="(\w+)"/g)) assert.ok(rules.some((x) => x.alert === name[1]), name[1]);
  });
});

describe('when the alert rules are read', () => {
  interface Case { alertname: string; eval_time: string; exp_alerts: unknown[] }
  const groups = (parse(readFileSync(RULE_TESTS, 'utf8')) as { tests: { alert_rule_test: Case[] }[] }).tests.map((t) => t.alert_rule_test);
  const seconds = (d: string) => [...d.matchAll(/(\d+)([hms])/g)].reduce((n, [, v, u]) => n + Number(v) * { h: 3600, m: 60, s: 1 }[u as 'h' | 'm' | 's'], 0);
  const scenario = (cases: Case[]) => rules.every((r) => cases.some((c) => c.alertname === r.alert));

  it('should have, for each alert, a case where it stays quiet, fires, and resolves later in the same run', () => {
    for (const { alert } of rules) {
      const own = groups.filter((g) => !scenario(g) && g.some((c) => c.alertname === alert && c.exp_alerts.length > 0));
      assert.ok(own.length, `${alert}: no case where it fires`);
      const ok = own.some((g) => {
        const mine = g.filter((c) => c.alertname === alert);
        const fired = Math.min(...mine.filter((c) => c.exp_alerts.length).map((c) => seconds(c.eval_time)));
        return mine.some((c) => !c.exp_alerts.length && seconds(c.eval_time) < fired) && mine.some((c) => !c.exp_alerts.length && seconds(c.eval_time) > fired);
      });
      assert.ok(ok, `${alert}: no run where it is quiet first, then fires, then resolves`);
    }
  });

  it('should check every alert in the blip and outage scenarios: nothing fires for one failed request, nothing 3 minutes after a 2-minute outage', () => {
    const scenarios = groups.filter(scenario);
    assert.ok(scenarios.length >= 2, 'the blip and the outage scenarios list every alert');
    for (const g of scenarios) {
      const quietAt = new Set(g.filter((c) => !c.exp_alerts.length).map((c) => c.eval_time));
      for (const t of quietAt) for (const { alert } of rules) assert.ok(g.some((c) => c.alertname === alert && c.eval_time === t && !c.exp_alerts.length), `${alert} unchecked at ${t}`);
    }
  });

  it('should give each alert a for:, a severity, a summary, a description and a runbook at a heading of docs/operations.md', () => {
    const headings = new Set(readFileSync(path('docs/operations.md'), 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => anchor(l.replace(/^#+ /, ''))));
    assert.ok(rules.length >= 10);
    for (const r of rules) {
      assert.match(r.for ?? '', /^\d+[smh]$/, `${r.alert}: for`);
      if (r.keep_firing_for !== undefined) assert.match(r.keep_firing_for, /^\d+[smh]$/, `${r.alert}: keep_firing_for`);
      assert.ok(['critical', 'warning'].includes(r.labels?.severity ?? ''), `${r.alert}: severity`);
      assert.ok(r.annotations?.summary && r.annotations.description, `${r.alert}: summary and description`);
      const m = /^https:\/\/github\.com\/keel-http\/keel\/blob\/main\/docs\/operations\.md#(.+)$/.exec(r.annotations?.runbook_url ?? '');
      assert.ok(m, `${r.alert}: runbook_url ${r.annotations?.runbook_url}`);
      assert.ok(headings.has(m[1]!), `${r.alert}: docs/operations.md has no heading for #${m[1]}`);
    }
  });

  it('should page (critical) only on symptoms: the error budget, no instance answering, no instance ready', () => {
    assert.deepEqual(rules.filter((r) => r.labels?.severity === 'critical').map((r) => r.alert).sort(), ['KeelErrorBudgetBurn', 'KeelJobDown', 'KeelNoInstanceReady']);
  });
});

describe('when the dashboard is read', () => {
  it('should be a Grafana dashboard on a data-source variable, with job and instance variables', () => {
    assert.equal(dashboard.uid, 'keel-http-overview');
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    assert.equal(vars.datasource?.type, 'datasource');
    assert.equal(vars.datasource?.query, 'prometheus');
    for (const name of ['job', 'instance']) {
      assert.equal(vars[name]?.type, 'query', name);
      assert.equal(vars[name]?.allValue, '.*', name);
    }
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
      assert.equal(p.datasource?.uid, '${datasource}', p.title);
      assert.ok(p.targets?.length, `${p.title}: no query`);
      for (const t of p.targets!) assert.equal(t.datasource?.uid, '${datasource}', p.title);
    }
  });

  it('should select every query by $job and $instance, and chart every alert\'s metrics', () => {
    for (const t of targets) {
      for (const m of t.expr.matchAll(/\b(?:keel|process|nodejs)_[a-z0-9_]+(\{[^}]*\})?/g)) {
        assert.ok(m[1]?.includes('job=~"$job"') && m[1].includes('instance=~"$instance"'), `${t.panel}: ${m[0]}`);
      }
    }
    const family = (name: string) => name.replace(/_(bucket|count|sum)$/, '');
    const charted = new Set(targets.flatMap((t) => metricNames(t.expr).map(family)));
    for (const r of rules) for (const name of readBy(r)) assert.ok(charted.has(family(name)), `${r.alert} reads ${name}, which no panel shows`);
  });
});

describe('when real Prometheus scrapes a keel App under traffic', { skip: NO_PROMETHEUS || NO_REDIS, timeout: 180_000 }, () => {
  const JOB = 'keel';
  let redis: RedisServer;
  let observed: ObservedApp;
  let prometheus: PrometheusServer;
  let start = 0;
  let end = 0;
  let scrape = '';
  const statuses: Record<number, number> = {};

  /** Wait until an instant query returns data (bounded). */
  async function until(expr: string, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await prometheus.query(expr)).result.length === 0) {
      if (Date.now() > deadline) throw new Error(`${what}: no data for ${expr} within ${timeoutMs} ms`);
      await sleep(250);
    }
  }

  before(async () => {
    redis = await startRedis();
    observed = await startObservedApp(redis.url, { queue: `ops-assets-${process.pid}` });
    prometheus = await startPrometheus({ targets: [{ job: JOB, url: observed.url }], ruleFiles: [RULES] });
    start = Math.floor(Date.now() / 1000);
    await prometheus.scrapes(1);
    const count = (s: Record<number, number>) => Object.entries(s).forEach(([k, n]) => (statuses[Number(k)] = (statuses[Number(k)] ?? 0) + n));
    for (let round = 0; round < 8; round++) {
      count(await observed.traffic(round));
      await sleep(400);
    }
    await prometheus.scrapes(2);
    // An outage: the rate-limit store fails closed (503), jobs are refused, dependencies go down, clients reconnect.
    await redis.kill();
    await until(`min(keel_dependency_up{job="${JOB}"}) == 0`, 'the outage');
    // A counter's first sample is not an increase (rate() starts at its second): traffic across scrapes.
    for (let round = 100; round < 103; round++) {
      count(await observed.traffic(round));
      await prometheus.scrapes(1);
    }
    await redis.start();
    await until(`min(keel_dependency_up{job="${JOB}"}) == 1`, 'the recovery');
    count(await observed.traffic(200));
    await prometheus.scrapes(3);
    end = Math.ceil(Date.now() / 1000);
    scrape = await (await fetch(`${observed.url}/metrics`)).text();
  });

  after(async () => {
    await prometheus?.stop();
    await observed?.close();
    await redis?.stop();
  });

  it('should have answered 200, 202, 404, 429, 500 and 503 (the traffic the panels chart)', () => {
    for (const status of [200, 202, 404, 429, 500, 503]) assert.ok(statuses[status], `no ${status}: ${JSON.stringify(statuses)}`);
  });

  it('should expose every metric the dashboard and the alert rules read', () => {
    const families = new Set<string>();
    for (const m of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      families.add(m[1]!);
      if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) families.add(m[1]! + s);
    }
    const used = new Set([...targets.flatMap((t) => metricNames(t.expr)), ...allRules.flatMap((r) => metricNames(r.expr))]);
    assert.ok(used.size >= 12, [...used].join(' '));
    // Exposed by the primary of a workers > 1 server only (this App runs in one process).
    const clusterOnly = new Set(['keel_cluster_worker_restarts_total']);
    assert.deepEqual([...used].filter((name) => !families.has(name) && !clusterOnly.has(name)), [], 'metrics keel does not expose');
  });

  it('should answer the job and instance variables with the scraped App', async () => {
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
      const query = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\((.+), (\w+)\)$/.exec(query);
      assert.ok(m, `${v.name}: ${query}`);
      const values = (await prometheus.api(`/api/v1/label/${m[2]}/values?match[]=${encodeURIComponent(substitute(m[1]!, JOB))}`)) as string[];
      assert.deepEqual(values, [v.name === 'job' ? JOB : new URL(observed.url).host], v.name);
    }
  });

  it('should run every panel query, and return data for each metric the run made', async () => {
    // The run kills no worker and uses BullMQ, not the in-process queue: what stays empty, and why.
    const notMade: [RegExp, string][] = [
      [/keel_background_jobs_stalled_total/, 'no worker died or blocked past its lock'],
      [/queue="memory"/, 'the App queues jobs in BullMQ'],
      [/keel_cluster_worker_restarts_total/, 'the App runs in one process (workers: 1)'],
    ];
    const empty: string[] = [];
    for (const t of targets) {
      const expr = substitute(t.expr, JOB);
      const answer = await prometheus.queryRange(expr, start, end, 1);
      assert.equal(answer.status, 'success', `${t.panel} ${t.refId}: ${answer.error} in ${expr}`);
      const values = answer.result.flatMap((s) => s.values ?? []).filter(([, v]) => Number.isFinite(Number(v)));
      const reason = notMade.find(([re]) => re.test(t.expr));
      if (!reason && values.length === 0) empty.push(`${t.panel} ${t.refId}: ${expr}`);
    }
    assert.deepEqual(empty, [], 'panels with no data');
  });

  it('should chart what the run did: 5xx, 429s, the outage, failed jobs and delivered events', async () => {
    const max = async (expr: string) => Math.max(0, ...(await prometheus.queryRange(substitute(expr, JOB, '10s'), start, end, 1)).result.flatMap((s) => (s.values ?? []).map(([, v]) => Number(v))).filter(Number.isFinite));
    assert.ok((await max(`sum(rate(keel_http_requests_total{job="${JOB}",status="500"}[$__rate_interval]))`)) > 0, '500s');
    assert.ok((await max(`sum(rate(keel_rate_limit_decisions_total{job="${JOB}",decision="limited"}[$__rate_interval]))`)) > 0, '429s');
    assert.ok((await max(`sum(rate(keel_rate_limit_decisions_total{job="${JOB}",decision="store_error_refused"}[$__rate_interval]))`)) > 0, 'fail closed during the outage');
    assert.ok((await max(`sum(rate(keel_store_errors_total{job="${JOB}"}[$__rate_interval]))`)) > 0, 'store errors');
    assert.ok((await max(`sum(keel_redis_reconnects_total{job="${JOB}"})`)) > 0, 'reconnects');
    assert.ok((await max(`sum(rate(keel_background_jobs_processed_total{job="${JOB}",outcome="failed"}[$__rate_interval]))`)) > 0, 'failed jobs');
    assert.ok((await max(`sum(rate(keel_events_total{job="${JOB}",outcome="delivered"}[$__rate_interval]))`)) > 0, 'delivered events');
    const up = await prometheus.queryRange(`min by (dependency) (keel_dependency_up{job="${JOB}"})`, start, end, 1);
    assert.deepEqual(up.result.map((s) => s.metric.dependency).sort(), ['background', 'pubsub', 'rate_limit_store']);
    for (const s of up.result) assert.ok(s.values!.some(([, v]) => v === '0') && s.values!.at(-1)![1] === '1', `${s.metric.dependency}: down in the outage, up at the end`);
  });

  it('should load and evaluate every alert rule on the scraped series without error', async () => {
    const data = (await prometheus.api('/api/v1/rules')) as { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
    const loaded = data.groups.flatMap((g) => g.rules);
    assert.deepEqual(loaded.map((r) => r.name).sort(), allRules.map((r) => r.alert ?? r.record).sort());
    for (const r of loaded) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError}`);
  });
});

/**
 * `keel-conformance`: run conformance cases against a server, or against keel's fixture app.
 *
 *   keel-conformance --base-url http://127.0.0.1:3000 cases/           # any implementation, one server
 *   keel-conformance --exec "./serve {case_file} {port}" cases/        # any implementation, started per group
 *   keel-conformance --manifest cases.json cases/                      # what an implementation must serve
 *   keel-conformance test/fixtures/conformance                         # keel's fixture app
 *   keel-conformance --serve cases/                                    # only start the fixture app
 *
 * Exit codes: 0 all ran cases passed, 1 a case failed, 2 usage error. docs/conformance.md has the rest.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './client.js';
import { CONFORMANCE_LEVELS, type ConformanceLevel } from './compare.js';
import { DEFAULT_EXEC_START_TIMEOUT_MS, EXEC_GROUPINGS, execTarget, parsePortRange, type ExecGrouping } from './exec.js';
import { contradictionIndex } from './contradictions.js';
import { corpusLayoutDirs, forAnyImplementation, loadCases } from './loader.js';
import { buildManifest, WEBSOCKET_NOT_IN_MANIFEST } from './manifest.js';
import { formatList } from './list.js';
import { loadSuite, REQUIREMENTS, type Requirement } from './suite/index.js';

export { formatList };
import { formatContradicted, formatFailures, formatTable, standingLine, summaryLine, toJson, toJUnit, type RunMeta } from './report.js';
import { runnerVersion } from './version.js';
import { runCases, type CaseStatus, type RunOptions, type RunReport } from './runner.js';
import { toHtml } from './report-html.js';
import { contradictedBases, generateVariants, parseVariantFlags, summariseVariants, variantLine, type VariantSummary } from './variants.js';
import { isRunnable, isRunnableProtocol, isRunnableWebSocket, type ConformanceCase, type LoadedCase, type ProtocolCase, type RunnableCase } from './types.js';

/** What `--json` names as the corpus of a run of the shipped suite. */
export const SHIPPED_SUITE = 'keel-conformance suite (shipped with the runner)';

export const USAGE = `Usage: keel-conformance [options] [case files or directories...]

With no path, keel's own suite runs: its cases ship with the runner (ids keel/<category>/<name>).
Several files and directories may be given (e.g. <corpus>/testing_data <corpus>/fixtures); case ids
keep the corpus layout (testing_data/<category>/<name>, fixtures/<category>/<id>).

Where the cases go (one of):
  --base-url URL   Send the cases to a running server (any implementation of the specification).
  --exec CMD       Start the implementation per group of cases: CMD runs in a shell with {case_file}
                   (a manifest of the group's cases) and {port} (listen on 127.0.0.1:{port}) replaced;
                   the harness waits for the port, runs the group, stops the server (SIGTERM).
  (neither)        keel's fixture app is built from the cases and served on 127.0.0.1.
  --serve          Build and serve the fixture app from the cases, print its URL, run nothing
                   (binds to --base-url's host and port when given, else a free loopback port).

Options:
  --group MODE     With --exec: route (default: few servers, never changing a verdict: cases share one
                   unless two handlers would take one request; a case expecting 404, 405 or Allow, or
                   sending HEAD, OPTIONS or a request not for its own route, shares only with its own
                   handler definition), handler (one per handler definition), case (one per case).
  --exec-timeout MS  With --exec: how long a server may take to listen (default ${DEFAULT_EXEC_START_TIMEOUT_MS}).
  --port-range A-B With --exec: give the servers ports A to B only (inclusive; default any free port).
  --level LEVEL    strict (default): status, listed headers and cookies, whole body.
                   lenient: status, problem type slug, and loc + type of each validation error.
  --require STANDING  Only cases of that standing or a more general one: required (the
                   specification or an RFC says so: what every implementation must pass), reference
                   (also the reference implementation's answers), keel (also keel's own choices: all).
                   Cases without a standing (corpus files) are left out.
  --list           Print the cases (method and target sent, expected status, route) and the route
                   table an implementation must serve; run nothing.
  --manifest FILE  Write the manifest (JSON: per case route, parameters, schemas, exact request,
                   the handler's own answer; never the framework's) to FILE ("-" for standard
                   output); run nothing.
  --json FILE      Write the results as JSON (summary with runner version, corpus, level, case counts,
                   server starts and wall time; per case: request sent, expected, actual, differences).
  --junit FILE     Write the results as JUnit XML.
  --filter TEXT    Only cases whose id contains TEXT (plain substring, case-sensitive); repeat it
                   for a union (--filter keel/routing/ --filter keel/cors/); a filter that matches
                   no case is a usage error (exit 2).
  --timeout MS     Per-request timeout: the whole answer must arrive within MS milliseconds (default
                   ${DEFAULT_REQUEST_TIMEOUT_MS}). Under --exec a server that does not answer in time is
                   reported once as not answering and killed; its group's other cases are not sent.
  --variants N     Also run up to N generated variants of each framework-owned case (status >= 400):
                   other failing values, renamed parameters and paths, other origins, bodies, tokens,
                   unknown paths and methods, derived by rule (docs/conformance.md, "Generated variants").
  --seed S         The variants' seed (default: drawn at random; printed in the summary and --json).
  --report FILE    Write a self-contained HTML report: per category and rule, passed / failed /
                   contradicted, with each failure's differences and the request sent.
  --quiet          Only the table, failures and the summary line (no per-case lines).
  --no-diffs       Leave out the failure diffs (a pass-rate report).
  --exit-zero      Exit 0 even when cases fail (reports; CI gates should not use it).
  -h, --help       Show this help.
`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: CliIo = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };

/** Run the CLI; resolves to the exit code. `--serve` resolves only when the process is signalled. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'base-url': { type: 'string' },
        exec: { type: 'string' },
        group: { type: 'string' },
        'exec-timeout': { type: 'string' },
        'port-range': { type: 'string' },
        level: { type: 'string' },
        require: { type: 'string' },
        list: { type: 'boolean', default: false },
        manifest: { type: 'string' },
        serve: { type: 'boolean', default: false },
        json: { type: 'string' },
        junit: { type: 'string' },
        filter: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        'no-diffs': { type: 'boolean', default: false },
        'exit-zero': { type: 'boolean', default: false },
        variants: { type: 'string' },
        seed: { type: 'string' },
        report: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  // No corpus path: keel's own suite, shipped with the runner (suite/index.ts).
  const shipped = positionals.length === 0;
  const corpusName = shipped ? SHIPPED_SUITE : positionals.join(', ');
  const timeoutMs = values.timeout !== undefined ? Number(values.timeout) : undefined;
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    io.err(`--timeout must be a positive integer (milliseconds), got ${JSON.stringify(values.timeout)}`);
    return 2;
  }
  const level = (values.level ?? 'strict') as ConformanceLevel;
  if (!CONFORMANCE_LEVELS.includes(level)) {
    io.err(`--level must be one of ${CONFORMANCE_LEVELS.join(', ')}, got ${JSON.stringify(values.level)}`);
    return 2;
  }
  const group = (values.group ?? 'route') as ExecGrouping;
  if (!EXEC_GROUPINGS.includes(group)) {
    io.err(`--group must be one of ${EXEC_GROUPINGS.join(', ')}, got ${JSON.stringify(values.group)}`);
    return 2;
  }
  const execTimeoutMs = values['exec-timeout'] !== undefined ? Number(values['exec-timeout']) : undefined;
  if (execTimeoutMs !== undefined && (!Number.isInteger(execTimeoutMs) || execTimeoutMs <= 0)) {
    io.err(`--exec-timeout must be a positive integer (milliseconds), got ${JSON.stringify(values['exec-timeout'])}`);
    return 2;
  }
  let portRange: readonly [number, number] | undefined;
  if (values['port-range'] !== undefined) {
    if (values.exec === undefined) {
      io.err('--port-range chooses the ports of the servers --exec starts: give it with --exec');
      return 2;
    }
    const parsed = parsePortRange(values['port-range']);
    if (typeof parsed === 'string') {
      io.err(`--port-range: ${parsed}`);
      return 2;
    }
    portRange = parsed;
  }
  if (values.exec !== undefined && (values['base-url'] !== undefined || values.serve)) {
    io.err('--exec starts the server itself: give it without --base-url and --serve');
    return 2;
  }
  if (values.exec !== undefined && (!values.exec.includes('{port}') || !values.exec.includes('{case_file}'))) {
    io.err(`--exec needs both {case_file} and {port} in the command, got ${JSON.stringify(values.exec)}`);
    return 2;
  }
  let baseUrl: string | undefined;
  if (values['base-url'] !== undefined) {
    try {
      const u = new URL(values['base-url']);
      if (u.protocol !== 'http:') throw new Error('only http:// base URLs are supported');
      baseUrl = u.href;
    } catch (err) {
      io.err(`--base-url: ${(err as Error).message}`);
      return 2;
    }
  }

  const variants = parseVariantFlags(values.variants, values.seed);
  if (typeof variants === 'string') {
    io.err(variants);
    return 2;
  }

  let cases: LoadedCase[];
  let corpus: LoadedCase[];
  let verdictCorpus: LoadedCase[];
  try {
    // The whole corpus is kept: a contradiction's other case is read from it, filtered out or not.
    corpus = shipped ? loadSuite() : loadCases(positionals);
    // The corpus's skips for Node implementations are keel's fixture app's, not another implementation's.
    const fixtureApp = values.exec === undefined && (values['base-url'] === undefined || values.serve) && values.manifest === undefined && !values.list;
    if (!fixtureApp) corpus = forAnyImplementation(corpus);
    cases = corpus;
    // A contradiction's other case may lie outside the part of a corpus given (e.g. only
    // testing_data/query_params): its expectation is read from the whole corpus the paths lie in.
    verdictCorpus = shipped ? corpus : withWholeCorpus(corpus, positionals);
  } catch (err) {
    io.err((err as Error).message);
    return 2;
  }
  // Repeated --filter is a union: a case runs when its id contains any of them. Each must match
  // something: a typo in a CI filter must not turn into a green run of less than was meant.
  const filters = values.filter ?? [];
  if (filters.length) {
    for (const filter of filters) {
      if (!cases.some((c) => c.id.includes(filter))) {
        io.err(`--filter ${JSON.stringify(filter)} matches no case of ${corpusName} (a plain, case-sensitive substring of the case ids; --list shows them)`);
        return 2;
      }
    }
    cases = cases.filter((c) => filters.some((f) => c.id.includes(f)));
  }

  if (values.require !== undefined) {
    const at = REQUIREMENTS.indexOf(values.require as Requirement);
    if (at < 0) {
      io.err(`--require must be one of ${REQUIREMENTS.join(', ')}, got ${JSON.stringify(values.require)}`);
      return 2;
    }
    const allowed = new Set(REQUIREMENTS.slice(0, at + 1));
    cases = cases.filter((c) => c.requirement !== undefined && allowed.has(c.requirement));
    if (cases.length === 0) {
      io.err(`--require ${values.require} matches no case of ${corpusName}${filters.length ? ' (after --filter)' : ''}: only cases that carry a requirement (the shipped suite's) are selected`);
      return 2;
    }
  }

  if (variants) {
    cases = [...cases, ...generateVariants(cases, { ...variants, exclude: contradictedBases(verdictCorpus) })];
  }

  const meta = { corpus: shipped ? [SHIPPED_SUITE] : positionals.map((p) => resolve(p)), level, ...(filters.length ? { filter: filters.length === 1 ? filters[0]! : filters } : {}), ...(values.require !== undefined ? { require: values.require } : {}), cases_loaded: corpus.length, cases_selected: cases.length, ...(variants ? { variants } : {}) };

  if (values.manifest !== undefined) {
    const text = `${JSON.stringify(buildManifest(cases), null, 2)}\n`;
    if (values.manifest === '-') io.out(text.trimEnd());
    else writeFileSync(values.manifest, text);
    return 0;
  }
  if (values.list) {
    io.out(formatList(cases));
    return 0;
  }

  if (values.exec !== undefined) {
    const runnable = cases.filter((c) => isRunnable(c) || isRunnableProtocol(c)) as Array<ConformanceCase | ProtocolCase>;
    const exec = execTarget(runnable, { command: values.exec, group, ...(execTimeoutMs ? { startTimeoutMs: execTimeoutMs } : {}), ...(portRange ? { portRange } : {}) });
    try {
      // The group's server is given a manifest, which has no WebSocket sessions: they are skipped, saying so.
      const ordered: LoadedCase[] = [...exec.order, ...cases.filter((c) => !isRunnable(c) && !isRunnableProtocol(c)).map((c) => (isRunnableWebSocket(c) ? { ...c, skip: `not run under --exec: ${WEBSOCKET_NOT_IN_MANIFEST}` } : c))];
      const about = { ...meta, target: 'exec' as const, starts: () => exec.launches() };
      return await runAndReport(ordered, { target: exec.target, corpus: verdictCorpus, level, ...(timeoutMs ? { timeoutMs } : {}) }, values, io, about, () => `${exec.launches()} server start${exec.launches() === 1 ? '' : 's'} (--group ${group})`);
    } finally {
      await exec.close();
    }
  }

  let target: RunOptions['target'];
  if (baseUrl && !values.serve) target = baseUrl;
  else {
    // Imported lazily: runs against a base URL need none of keel's server code.
    const [{ serveFixtureApp, fixtureTarget }, { skipWithoutPackages }] = await Promise.all([import('./fixture-app.js'), import('./fixture-packages.js')]);
    const available = skipWithoutPackages(cases);
    cases = available.cases;
    if (available.missing.length) io.err(`note: cases that need ${available.missing.join(', ')} are skipped (optional peer dependencies of keel that are not installed here): npm install ${available.missing.join(' ')} to run them`);
    if (values.serve) {
      const runnable = cases.filter((c) => isRunnable(c) || isRunnableWebSocket(c)) as RunnableCase[];
      const served = await serveFixtureApp(runnable, { ...(baseUrl ? { host: new URL(baseUrl).hostname, port: Number(new URL(baseUrl).port) } : {}) });
      for (const id of served.shadowed) io.err(`warning: ${id} not mounted: an earlier case has the same method and route (use --filter)`);
      io.out(`keel fixture app for ${runnable.length - served.shadowed.length} cases listening on ${served.url}`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await served.close();
      return 0;
    }
    target = fixtureTarget;
  }

  return runAndReport(cases, { target, corpus: verdictCorpus, level, ...(timeoutMs ? { timeoutMs } : {}) }, values, io, { ...meta, target: typeof target === 'string' ? 'base-url' : 'fixture-app' });
}

/** The cases loaded, plus the rest of the corpora they lie in (ids not loaded already). */
function withWholeCorpus(loaded: readonly LoadedCase[], paths: readonly string[]): LoadedCase[] {
  let whole: LoadedCase[];
  try {
    whole = loadCases(corpusLayoutDirs(paths));
  } catch {
    return [...loaded];
  }
  const ids = new Set(loaded.map((c) => c.id));
  return [...loaded, ...whole.filter((c) => !ids.has(c.id))];
}

/** The summary's word on the variants and the HTML report, after the run. */
function variantsAndReport(report: RunReport, flags: ReportFlags, io: CliIo, variants: AboutRun['variants']): VariantSummary | undefined {
  const summary = variants ? summariseVariants(report.results, variants.seed, variants.perCase) : undefined;
  if (summary) io.out(variantLine(summary));
  if (flags.report) writeFileSync(flags.report, toHtml(report, { ...(summary ? { variants: summary } : {}) }));
  return summary;
}

const PROGRESS: Record<CaseStatus, string> = { passed: 'ok  ', failed: 'FAIL', contradicted: '~   ', skipped: 'skip' };

interface ReportFlags {
  quiet?: boolean;
  'no-diffs'?: boolean;
  'exit-zero'?: boolean;
  json?: string;
  junit?: string;
  report?: string;
}

/** What runAndReport says about the run in `--json` (RunMeta without what it measures itself). */
type AboutRun = Omit<RunMeta, 'runner_version' | 'wall_time_ms' | 'server_starts' | 'variants'> & { starts?: () => number; variants?: { seed: number; perCase: number } };

async function runAndReport(cases: readonly LoadedCase[], options: RunOptions, flags: ReportFlags, io: CliIo, about: AboutRun, footer?: () => string): Promise<number> {
  const started = performance.now();
  const report = await runCases(cases, {
    ...options,
    ...(flags.quiet ? {} : { onResult: (r) => io.out(`${PROGRESS[r.status]} ${r.id}`) }),
  });
  const failures = flags['no-diffs'] ? '' : formatFailures(report.results);
  if (failures) io.out(`\n${failures}`);
  const contradicted = formatContradicted(report.results);
  if (contradicted && !flags['no-diffs']) io.out(`\n${contradicted}`);
  io.out(`\n${formatTable(report)}\n`);
  if (footer) io.out(footer());
  const standings = standingLine(report.results);
  if (standings) io.out(standings);
  const variantSummary = variantsAndReport(report, flags, io, about.variants);
  if (flags.json) {
    const { starts, variants: _variants, ...rest } = about;
    const wall = Math.round(performance.now() - started);
    const corpus = options.corpus ?? cases;
    const ids = new Set(corpus.map((c) => c.id));
    const entries = [...contradictionIndex(corpus).values()].flat().filter((e) => ids.has(e.case));
    const contradictions = { found_by_rule: entries.filter((e) => e.rule).length, listed: entries.filter((e) => !e.rule).length };
    const meta: RunMeta = { runner_version: runnerVersion(), ...rest, ...(starts ? { server_starts: starts() } : {}), wall_time_ms: wall, contradictions, ...(variantSummary ? { variants: variantSummary } : {}) };
    writeFileSync(flags.json, toJson(report, meta));
  }
  if (flags.junit) writeFileSync(flags.junit, toJUnit(report));
  io.out(summaryLine(report));
  return report.failed > 0 && !flags['exit-zero'] ? 1 : 0;
}

/**
 * `keel-conformance`: run conformance cases against a server, or against keel's fixture app.
 *
 *   keel-conformance --base-url http://127.0.0.1:3000 cases/           # any implementation
 *   keel-conformance test/fixtures/conformance                        # keel's fixture app
 *   keel-conformance --serve cases/                                   # only start the fixture app
 *
 * Exit codes: 0 all ran cases passed, 1 a case failed, 2 usage error.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadCases } from './loader.js';
import { formatFailures, formatTable, summaryLine, toJson, toJUnit } from './report.js';
import { runCases, type RunOptions } from './runner.js';
import { isRunnable, type ConformanceCase } from './types.js';

export const USAGE = `Usage: keel-conformance [options] <case files or directories...>

Options:
  --base-url URL   Send the cases to a running server (any implementation of the specification).
                   Without it, keel's fixture app is built from the cases and served on 127.0.0.1.
  --serve          Build and serve the fixture app from the cases, print its URL, run nothing
                   (binds to --base-url's host and port when given, else a free loopback port).
  --json FILE      Write the results as JSON.
  --junit FILE     Write the results as JUnit XML.
  --filter TEXT    Only cases whose id contains TEXT.
  --timeout MS     Per-request timeout in milliseconds (default 10000).
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
        serve: { type: 'boolean', default: false },
        json: { type: 'string' },
        junit: { type: 'string' },
        filter: { type: 'string' },
        timeout: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        'no-diffs': { type: 'boolean', default: false },
        'exit-zero': { type: 'boolean', default: false },
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
  if (positionals.length === 0) {
    io.err(`No case files or directories given.\n\n${USAGE}`);
    return 2;
  }
  const timeoutMs = values.timeout !== undefined ? Number(values.timeout) : undefined;
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    io.err(`--timeout must be a positive integer (milliseconds), got ${JSON.stringify(values.timeout)}`);
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

  let cases;
  try {
    cases = loadCases(positionals);
  } catch (err) {
    io.err((err as Error).message);
    return 2;
  }
  if (values.filter) cases = cases.filter((c) => c.id.includes(values.filter!));

  let target: RunOptions['target'];
  if (baseUrl && !values.serve) target = baseUrl;
  else {
    // Imported lazily: runs against a base URL need none of keel's server code.
    const { serveFixtureApp, fixtureTarget } = await import('./fixture-app.js');
    if (values.serve) {
      const runnable = cases.filter(isRunnable) as ConformanceCase[];
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

  {
    const report = await runCases(cases, {
      target,
      ...(timeoutMs ? { timeoutMs } : {}),
      onResult: values.quiet ? undefined : (r) => io.out(`${r.status === 'passed' ? 'ok  ' : r.status === 'failed' ? 'FAIL' : 'skip'} ${r.id}`),
    });
    const failures = values['no-diffs'] ? '' : formatFailures(report.results);
    if (failures) io.out(`\n${failures}`);
    io.out(`\n${formatTable(report)}\n`);
    if (values.json) writeFileSync(values.json, toJson(report));
    if (values.junit) writeFileSync(values.junit, toJUnit(report));
    io.out(summaryLine(report));
    return report.failed > 0 && !values['exit-zero'] ? 1 : 0;
  }
}

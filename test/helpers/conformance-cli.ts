/** keel-conformance's `main` run in process, its output lines captured. */
import { main } from '../../harness/conformance/cli-main.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** The last line written to standard output (the summary line). */
  last: string | undefined;
}

export async function runCli(argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n'), last: out.at(-1) };
}

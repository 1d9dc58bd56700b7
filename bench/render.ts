/**
 * Re-render the Markdown and SVG of a saved run without measuring again:
 * `npx tsx bench/render.ts [bench/results/latest.json] [--restage]` writes the .md and .svg beside it.
 *
 * `--restage` first attributes the run's CPU profiles to stages again with the current
 * bench/stage-rules.ts (when the profile files are still there) and rewrites the JSON too, so a
 * change to the mapping shows without another benchmark run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { svgChart } from './chart.js';
import { markdownReport } from './report.js';
import { stagesOf, whereTheTimeGoes } from './breakdown.js';
import { attributeFile } from './stages.js';
import type { RunResult } from './stats.js';

const { values, positionals } = parseArgs({ options: { restage: { type: 'boolean', default: false } }, allowPositionals: true });
const file = positionals[0] ?? join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
const run = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
const base = file.replace(/\.json$/, '');

if (values.restage) {
  let n = 0;
  for (const s of run.scenarios) {
    const stages = stagesOf(s) ?? {};
    for (const [peer, st] of Object.entries(stages)) {
      // Profiles are named relative to the directory the run started in (the repository, under npm run).
      if (!existsSync(st.profile)) {
        console.warn(`${s.id} ${peer}: ${st.profile} is gone; its stages stay as they were`);
        continue;
      }
      stages[peer as keyof typeof stages] = attributeFile(st.profile, st.requests);
      n++;
    }
  }
  writeFileSync(file, `${JSON.stringify({ ...run, whereTheTimeGoes: whereTheTimeGoes(run) }, null, 2)}\n`);
  console.log(`re-attributed ${n} profiles; rewrote ${file}`);
}
writeFileSync(`${base}.md`, markdownReport(run));
writeFileSync(`${base}.svg`, svgChart(run));
console.log(`wrote ${base}.md and ${base}.svg`);

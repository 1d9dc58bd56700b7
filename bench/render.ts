/**
 * Re-render the Markdown and SVG of a saved run without measuring again:
 * `npx tsx bench/render.ts [bench/results/latest.json]` writes the .md and .svg beside it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { svgChart } from './chart.js';
import { markdownReport } from './report.js';
import type { RunResult } from './stats.js';

const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
const run = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
const base = file.replace(/\.json$/, '');
writeFileSync(`${base}.md`, markdownReport(run));
writeFileSync(`${base}.svg`, svgChart(run));
console.log(`wrote ${base}.md and ${base}.svg`);

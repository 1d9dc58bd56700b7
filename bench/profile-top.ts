/**
 * Summarise a V8 .cpuprofile (from `npm run bench -- --profile`): self time by stage (the mapping the
 * report's "Where the time goes" uses, bench/stage-rules.ts), then the functions with the most self
 * time, each with its stage and source location. Start-up (module loading, everything before the
 * first request) and idle time are left out, as in the report.
 * `npx tsx bench/profile-top.ts <file.cpuprofile> [count]`
 */
import { attribute, readProfile } from './stages.js';

const [file, countArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count]');
  process.exit(2);
}
const count = Number(countArg ?? 30);
// One "request" makes every per-request figure the profile's total µs.
const st = attribute(readProfile(file), 1, { topCount: count });
const busy = st.busyPerRequest;
const line = (us: number, label: string) => `${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${label}`;

console.log(`busy ${(busy / 1000).toFixed(0)} ms after start-up (start-up ${st.startupMs} ms and idle time left out)\n\nby stage:`);
for (const [stage, us] of Object.entries(st.perRequest)) console.log(line(us, stage));
console.log('\nfunctions by self time:');
for (const t of st.top) console.log(line(t.us, `${t.fn} ${t.where}`.trim().padEnd(60) + `  [${t.stage}]`));

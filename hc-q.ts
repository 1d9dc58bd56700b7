import { loadCases } from './harness/conformance/loader.js';
import { isRunnable, type ConformanceCase } from './harness/conformance/types.js';
const cs = [...loadCases(['../shared/conformance/testing_data']).map(c=>({...c,id:'testing_data/'+c.id})), ...loadCases(['../shared/conformance/fixtures']).map(c=>({...c,id:'fixtures/'+c.id}))];
for (const c of cs) { if (!isRunnable(c)) continue; const b = (c as ConformanceCase).expected.body as any;
  if (b && Array.isArray(b.errors)) for (const e of b.errors) console.log(c.id.padEnd(80), e.type, JSON.stringify(e.loc), Object.keys(e.ctx??{}).join(','), 'input' in e ? 'I' : '-', JSON.stringify(e.msg).slice(0,60));
}

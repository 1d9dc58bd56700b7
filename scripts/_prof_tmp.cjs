const M = require('module'); const orig = M._load; let depth = 0; const rows = [];
M._load = function (req, parent, isMain) { depth++; const t = process.hrtime.bigint(); try { return orig.apply(this, arguments); } finally { depth--; const d = Number(process.hrtime.bigint() - t) / 1e6; if (depth === 1) rows.push([req, d]); } };
const t0 = process.hrtime.bigint(); require(process.argv[2]); const total = Number(process.hrtime.bigint() - t0) / 1e6;
rows.sort((a, b) => b[1] - a[1]); console.log(process.argv[2], total.toFixed(1), rows.slice(0, 14).map(([r, d]) => `${r}=${d.toFixed(1)}`).join(' '));

// A mocha reporter that writes every test's full title and outcome to KEEL_PEER_RESULTS (JSON), so
// the suite's own console output cannot corrupt the results.
'use strict';
const fs = require('node:fs');
function KeelPeerReporter(runner) {
  const out = { passed: [], failed: [], skipped: [] };
  runner.on('pass', (t) => out.passed.push(t.fullTitle()));
  runner.on('pending', (t) => out.skipped.push(t.fullTitle()));
  runner.on('fail', (t, err) => out.failed.push({ title: t.fullTitle(), error: String((err && err.message) || err).slice(0, 500) }));
  runner.once('end', () => fs.writeFileSync(process.env.KEEL_PEER_RESULTS, JSON.stringify(out)));
}
module.exports = KeelPeerReporter;

// The spawnFixture() test helper (test/helpers/spawn-fixture.ts) that hostile, scale-out and bench replays start
// their server processes with: up when its line appears, and a clear error (with the output) when it never does.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnFixture } from './helpers/spawn-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'keel-fixture-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function script(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}
const alive = (pid: number): boolean => { try { process.kill(pid, 0); return true; } catch { return false; } };

describe('when the fixture says it is up', () => {
  it('should hand back the match of its ready line and stop it with SIGTERM', async () => {
    const file = script('up.mjs', "console.error('warming up'); console.log(`listening on http://127.0.0.1:${process.env.FAKE_PORT}`); setInterval(() => {}, 1000);\n");
    const fixture = await spawnFixture(file, { env: { FAKE_PORT: '4321' }, ready: /listening on (http:\/\/\S+)/ });
    assert.equal(fixture.ready[1], 'http://127.0.0.1:4321');
    assert.match(fixture.output(), /warming up/);
    assert.equal(await fixture.stop(), null); // killed by SIGTERM: no exit code
    assert.equal(alive(fixture.child.pid!), false);
  });
});

describe('when the fixture exits before it is up', () => {
  it('should reject with its exit code and what it wrote', async () => {
    const file = script('crash.mjs', "console.error('cannot bind'); process.exit(3);\n");
    await assert.rejects(spawnFixture(file, { ready: /listening/ }), /crash\.mjs exited \(3\) before it was up: cannot bind/);
  });
});

describe('when the fixture never says it is up', () => {
  it('should reject after readyMs and leave no process behind', async () => {
    const pidFile = join(dir, 'silent.pid');
    const file = script('silent.mjs', `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);\n`);
    await assert.rejects(spawnFixture(file, { ready: /listening/, readyMs: 5000 }), /silent\.mjs not up within 5000 ms/);
    // Killed before it got this far (tsx compiling on a busy machine), it left no pid: nothing to outlive us either.
    if (existsSync(pidFile)) assert.equal(alive(Number(readFileSync(pidFile, 'utf8'))), false);
  });
});

describe('when the fixture ignores SIGTERM', () => {
  it('should kill it after the grace period and say it hung', async () => {
    const file = script('stubborn.mjs', "process.on('SIGTERM', () => {}); console.log('READY'); setInterval(() => {}, 1000);\n");
    const fixture = await spawnFixture(file, { ready: /READY/ });
    assert.equal(await fixture.stop(500), 'hung');
    assert.equal(alive(fixture.child.pid!), false);
  });
});

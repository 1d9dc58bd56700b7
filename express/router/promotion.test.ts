import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('../fixtures/param-promotion.mjs', import.meta.url));
const keelExpress = fileURLToPath(new URL('../index.ts', import.meta.url));
const keelExpress4 = fileURLToPath(new URL('../express4.ts', import.meta.url));

/** The fixture's bytes promoted to the old generation per request, for the Express-compatible module `entry`. */
function promotedPerRequest(entry: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--import', 'tsx', fixture], { env: { ...process.env, ENTRY: entry }, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve((JSON.parse(stdout.trim().split('\n').pop()!) as { promotedPerRequest: number }).promotedPerRequest);
    });
  });
}

// V8 tracks object and array literals by allocation site; once most objects of a site outlive a scavenge (a burst of
// requests waiting in a param callback), it allocates that site's later objects in the old generation, for good. A
// router pass's param walk made there keeps its pass, request and response alive past every scavenge until the next
// full collection: ~5 KB promoted per request (Express 5 itself: ~9 KB), a quarter of the CPU in garbage collection
// under load. keel/express's per-pass objects are class instances, which V8 never pretenures.
describe('when a burst of requests waited in a param callback across scavenges', () => {
  it('should not promote the later requests of a keel/express app to the old generation', async () => {
    const bytes = await promotedPerRequest(keelExpress);
    assert.ok(bytes < 1500, `${bytes} bytes promoted per request (a request's router pass, request and response ≈ 5,000)`);
  });

  it('should not promote them on keel/express4 either', async () => {
    const bytes = await promotedPerRequest(keelExpress4);
    assert.ok(bytes < 1500, `${bytes} bytes promoted per request`);
  });

  it('should show the fixture measures it: Express 5 itself promotes its requests', async () => {
    const express5 = createRequire(import.meta.url).resolve('express');
    const bytes = await promotedPerRequest(express5);
    assert.ok(bytes > 3000, `express@5 promoted ${bytes} bytes per request`);
  });
});

// keel:integration
/**
 * Same-origin requests in a real browser (headless Chromium): a page served by the app POSTs JSON to
 * its own API on a route with a `cors` record, and Swagger UI's "Try it out" executes a POST on such a
 * route. Chromium sends `Origin` on both (Fetch standard), which a route's CorsConfig once refused
 * with 403. Needs /usr/bin/chromium; without it the tests are skipped with that reason.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { CHROMIUM_SKIP, TEST_OUTPUT, launchChromium, watchPage } from '../../test/helpers/browser.js';
import { createApp, type ServerHandle } from '../../lib/index.js';

const skip = CHROMIUM_SKIP;
const silent = pino({ level: 'silent' });
// Only https://example.com may call these routes cross-origin; the app's own pages are not cross-origin.
const CORS = { allowed_origins: ['https://example.com'], allowed_methods: ['POST'], allowed_headers: ['Content-Type'] };
const NOTE = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } as const;

describe("a page served by the app calling its own API in headless Chromium", { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  let dir: string;
  const seen: (string | undefined)[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-cors-page-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>notes</title><p id="result">pending</p><script src="/app.js"></script>');
    writeFileSync(join(dir, 'favicon.ico'), '');
    writeFileSync(join(dir, 'app.js'), [
      "fetch('/api/notes', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'first' }) })",
      "  .then(async (r) => { document.getElementById('result').textContent = r.status + ' ' + (await r.text()); })",
      "  .catch((e) => { document.getElementById('result').textContent = 'failed ' + e; });",
    ].join('\n'));
    const app = createApp({ port: 0, static_files: [{ directory: dir, route_prefix: '/' }] }, (a) => {
      a.post('/api/notes', (d) => {
        seen.push(d.headers.origin);
        return { saved: (d.body as { title: string }).title };
      }, { cors: CORS, body: NOTE });
    }, { logger: silent, securityHeaders: { content_security_policy: "default-src 'self'" } });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should let the page POST JSON to its own origin (Chromium sends Origin; the cors record does not refuse it)', async () => {
    const page = await browser.newPage();
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(`${handle.url}/index.html`, { waitUntil: 'load' });
    await page.waitForFunction("document.getElementById('result').textContent !== 'pending'", undefined, { timeout: 30_000 });
    const result = await page.locator('#result').innerText();
    await page.screenshot({ path: `${TEST_OUTPUT}cors-same-origin-page.png` });
    await page.close();
    assert.equal(result, '200 {"saved":"first"}');
    // The browser did send Origin: this is the case the record used to refuse.
    assert.deepEqual(seen, [new URL(handle.url).origin]);
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

describe("Swagger UI's Try it out on a POST route with a cors record in headless Chromium", { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  const origins: (string | undefined)[] = [];
  before(async () => {
    const app = createApp({ port: 0, openapi: { enabled: true, title: 'Notes', version: '1.0.0' } }, (a) => {
      a.post('/notes', (d) => {
        origins.push(d.headers.origin);
        return { saved: (d.body as { title: string }).title };
      }, { cors: CORS, body: NOTE, openapi: { summary: 'Create a note' } });
    }, { logger: silent });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
  });

  it('should execute the request and show its 200 answer', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(`${handle.url}/docs`, { waitUntil: 'load' });
    await page.click('.opblock-post .opblock-summary', { timeout: 30_000 });
    await page.click('button.try-out__btn');
    await page.click('button.execute');
    const status = page.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    const code = (await status.innerText()).trim();
    const body = await page.locator('.live-responses-table .response .response-col_description pre').first().innerText();
    await page.screenshot({ path: `${TEST_OUTPUT}cors-swagger-try-it-out.png`, fullPage: true });
    await page.close();
    assert.equal(code, '200', body);
    assert.match(body, /"saved"/);
    assert.deepEqual(origins, [new URL(handle.url).origin], 'Chromium sent the page origin with the POST');
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

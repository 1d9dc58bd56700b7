/**
 * The GraphiQL playground in a real browser (headless Chromium): it renders from local assets under
 * the route's CSP, loads nothing from outside the server, and runs a query against the App.
 * Screenshot: test-output/graphiql.png. Needs /usr/bin/chromium (Debian package `chromium`);
 * without it the test is skipped with that reason.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { App } from '../app.js';
import type { ServerHandle } from '../server.js';

const CHROMIUM = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const OUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
const skip = existsSync(CHROMIUM) ? false : `skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KEEL_CHROMIUM)`;

describe('the GraphiQL playground in headless Chromium', { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {}, { enablePlayground: true });
    handle = await app.listen();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    mkdirSync(OUT, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
  });

  it('should render from local assets and run a query', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const external: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(handle.url) && !u.startsWith('data:') && !u.startsWith('blob:')) external.push(u);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${handle.url}/graphql`, { waitUntil: 'load' });
    await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 30_000 });
    // Browser-side code as strings: this file is typechecked without the DOM library.
    await page.evaluate(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('{ hello(name: "browser") }')`);
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(`document.querySelector('.result-window')?.textContent?.includes('Hello, browser!')`, undefined, { timeout: 30_000 });
    await page.screenshot({ path: `${OUT}graphiql.png` });
    await page.close();
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

/**
 * The GraphiQL playground in a real browser (headless Chromium): it renders from local assets under
 * the route's CSP, loads nothing from outside the server, and runs a query against the App.
 * Screenshot: test-output/graphiql.png. Needs /usr/bin/chromium (Debian package `chromium`);
 * without it the test is skipped with that reason.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { CHROMIUM_SKIP, TEST_OUTPUT, launchChromium, watchPage } from '../../test/helpers/browser.js';
import { App } from '../app.js';
import type { ServerHandle } from '../server.js';

const OUT = TEST_OUTPUT;
const skip = CHROMIUM_SKIP;

describe('the GraphiQL playground in headless Chromium', { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {}, { enablePlayground: true });
    handle = await app.listen();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
  });

  it('should render from local assets and run a query', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const { external, problems } = watchPage(page, handle.url);
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

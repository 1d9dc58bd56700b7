// keel:integration
/**
 * The GraphiQL playground in a real browser (headless Chromium): it renders from local assets under
 * the route's CSP, loads nothing from outside the server, loads the schema through its introspection
 * query although the route has the example server's limits (depth 8, complexity 500: issue 18), and
 * runs a query typed in the editor. Screenshots: test-output/graphiql.png, graphiql-docs.png. Needs /usr/bin/chromium (Debian package `chromium`);
 * without it the test is skipped with that reason.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_SKIP, TEST_OUTPUT, launchChromium, watchPage } from '../../test/helpers/browser.js';
import { App } from '../app/app.js';
import type { ServerHandle } from '../server/server.js';

const OUT = TEST_OUTPUT;

/**
 * Wait until `selector` holds `text`. A locator, not `page.waitForFunction('…')`: Playwright evals a
 * string predicate again on every poll, and the page's CSP (script-src 'self', no 'unsafe-eval')
 * refuses every eval after the first, so a result slower than one animation frame failed the test
 * with "EvalError: … 'unsafe-eval' is not an allowed source of script" (only under load).
 */
function waitForText(page: Page, selector: string, text: string): Promise<void> {
  return page.locator(selector, { hasText: text }).first().waitFor({ timeout: 30_000 });
}
const skip = CHROMIUM_SKIP;

describe('the GraphiQL playground in headless Chromium', { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    // The example server's limits: GraphiQL's introspection query (depth 15) must still load the schema.
    app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 }, { enablePlayground: true });
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
    await waitForText(page, '.result-window', 'Hello, browser!');
    await page.screenshot({ path: `${OUT}graphiql.png` });
    await page.close();
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });

  it('should load the schema into the docs explorer and run a query typed in the editor', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(`${handle.url}/graphql`, { waitUntil: 'load' });
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 30_000 });
    await page.click('[aria-label="Show Documentation Explorer"]');
    // The explorer lists the root types and every type once the introspection query has answered.
    await waitForText(page, '.graphiql-doc-explorer', 'All Schema Types');
    const docs = await page.evaluate(`document.querySelector('.graphiql-doc-explorer').innerText`) as string;
    for (const type of ['Query', 'Mutation', 'Subscription', 'Book', 'Author', 'BookInput']) assert.match(docs, new RegExp(`\\b${type}\\b`), `${type} listed in: ${docs}`);
    await page.screenshot({ path: `${OUT}graphiql-docs.png` });

    // Typed key by key (CodeMirror closes brackets itself: the closing ones type over them).
    await page.click('.graphiql-query-editor .CodeMirror');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type('{ books(first: 2) { title author { name } } }');
    await page.keyboard.press('Escape'); // close an autocompletion popup, if any
    await page.click('.graphiql-execute-button');
    await waitForText(page, '.result-window', 'A Wizard of Earthsea');
    const result = await page.textContent('.result-window') ?? '';
    assert.match(result, /Ursula K\. Le Guin/);
    assert.doesNotMatch(result, /errors|LIMIT_EXCEEDED/);
    await page.close();
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

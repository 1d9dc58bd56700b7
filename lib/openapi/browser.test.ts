// keel:integration
/**
 * Swagger UI and Redoc in a real browser (headless Chromium): the pages render the App's operations
 * under keel's default security headers, load nothing from outside the server, and raise no CSP
 * violation. Screenshots go to test-output/. Needs /usr/bin/chromium (Debian package `chromium`);
 * without it the test is skipped with that reason.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { CHROMIUM_SKIP, TEST_OUTPUT, launchChromium, watchPage } from '../../test/helpers/browser.js';
import { App, type ServerHandle } from '../index.js';

const OUT = TEST_OUTPUT;
const skip = CHROMIUM_SKIP;

describe('API documentation pages in headless Chromium', { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  before(async () => {
    const app = new App({ port: 0, jwt_auth: { secret: 'browser-test-secret-browser-test-secret' }, openapi: { enabled: true, title: 'Browser Pets', version: '9.9.9' } }, { logger: pino({ level: 'silent' }) });
    app.get('/pets', () => [], { openapi: { operationId: 'listPets', summary: 'List all pets', tags: ['pets'] }, parameters: { query: { limit: { type: 'integer' } } } });
    app.post('/pets', () => ({}), { openapi: { summary: 'Create a pet', tags: ['pets'] }, body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } });
    app.get('/pets/{id:int}', () => ({}), { openapi: { summary: 'Show one pet', tags: ['pets'], deprecated: true } });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
  });

  async function open(path: string, ready: string): Promise<{ texts: string[]; external: string[]; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(handle.url + path, { waitUntil: 'load' });
    await page.waitForSelector(ready, { timeout: 30_000 });
    const texts = await page.locator(ready).allInnerTexts();
    await page.screenshot({ path: `${OUT}${path.slice(1)}.png`, fullPage: true });
    await page.close();
    return { texts, external, problems };
  }

  it('should render every operation in Swagger UI from local assets', async () => {
    const { texts, external, problems } = await open('/docs', '.opblock-summary');
    const joined = texts.join('\n');
    for (const expected of ['/pets', '/pets/{id}', 'List all pets', 'Create a pet', 'Show one pet']) assert.match(joined, new RegExp(expected.replace(/[{}]/g, '\\$&')));
    assert.equal(texts.length, 3);
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });

  it('should render every operation in Redoc from local assets', async () => {
    const { texts, external, problems } = await open('/redoc', '[data-section-id^="operation/"] h2');
    assert.deepEqual(texts.map((t) => t.trim().replace(/\s+/g, ' ')).sort(), ['Create a pet', 'List all pets', 'Show one pet Deprecated'], 'deprecation is shown');
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

describe("the example server's API documentation in headless Chromium", { skip }, () => {
  let handle: ServerHandle;
  let browser: Browser;
  before(async () => {
    const { buildExampleApp } = await import('../../examples/server.js');
    handle = await buildExampleApp({ port: 0, rate_limit: null }).listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await handle?.close();
  });

  async function texts(path: string, selector: string, shot: string): Promise<{ texts: string[]; external: string[]; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(handle.url + path, { waitUntil: 'load' });
    await page.waitForSelector(selector, { timeout: 30_000 });
    const found = (await page.locator(selector).allInnerTexts()).map((t) => t.trim().replace(/\s+/g, ' '));
    await page.screenshot({ path: `${OUT}example-${shot}.png`, fullPage: true });
    await page.close();
    return { texts: found, external, problems };
  }

  it("should list the example's routes, its JSON-RPC endpoint and its GraphQL route in Swagger UI", async () => {
    const { texts: ops, external, problems } = await texts('/docs', '.opblock-summary', 'docs');
    for (const expected of ['GET /items', 'POST /items', 'GET /items/{id}', 'POST /rpc JSON-RPC 2.0 endpoint', 'POST /graphql GraphQL query or mutation', 'GET /graphql GraphQL query']) {
      assert.ok(ops.some((t) => t === expected || t.startsWith(`${expected} `)), `${expected} in ${JSON.stringify(ops)}`);
    }
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });

  it("should call the JSON-RPC endpoint from Swagger UI's Try it out with the documented example", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const { external, problems } = watchPage(page, handle.url);
    await page.goto(`${handle.url}/docs`, { waitUntil: 'load' });
    const op = page.locator('#operations-JSON-RPC-jsonRpc');
    await op.locator('.opblock-summary').click();
    await op.locator('.try-out__btn').click();
    await op.locator('.execute').click();
    const body = op.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor({ timeout: 30_000 });
    const text = await body.innerText();
    await op.screenshot({ path: `${OUT}example-docs-rpc-try.png` });
    await page.close();
    assert.deepEqual(JSON.parse(text), { jsonrpc: '2.0', result: 1, id: 1 }, 'items.count of the example: one item');
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });

  it("should list the example's JSON-RPC and GraphQL operations in Redoc", async () => {
    const { texts: ops, external, problems } = await texts('/redoc', '[data-section-id^="operation/"] h2', 'redoc');
    for (const expected of ['JSON-RPC 2.0 endpoint', 'GraphQL query or mutation', 'GraphQL query']) assert.ok(ops.includes(expected), `${expected} in ${JSON.stringify(ops)}`);
    assert.deepEqual(external, []);
    assert.deepEqual(problems, []);
  });
});

// keel:integration
/**
 * The HTML report opened at a section link, as a reader opens a link someone pasted: headless
 * Chromium loads `report.html#<anchor>` directly (a fresh navigation, not a click) and the linked
 * section must be on screen, painted, at the top of the viewport when the page is long enough.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_SKIP, launchChromium, TEST_OUTPUT, watchPage } from '../../test/helpers/browser.js';
import { runCli } from '../../test/helpers/conformance-cli.js';

describe('when the HTML report is opened directly at a section link', { skip: CHROMIUM_SKIP }, () => {
  let dir: string;
  let server: Server;
  let browser: Browser;
  let report: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-report-html-'));
    // Every case fails against a teapot: the report has a section per behaviour.
    server = createServer((_req, res) => res.writeHead(418, { 'content-type': 'text/plain' }).end('teapot'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    report = join(dir, 'report.html');
    const r = await runCli(['--base-url', `http://127.0.0.1:${(server.address() as { port: number }).port}`, '--filter', 'keel/routing/', '--filter', 'keel/cors/', '--quiet', '--no-diffs', '--exit-zero', '--report', report]);
    assert.equal(r.code, 0, r.err);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('should give every link a unique target whose id an HTML id can hold', () => {
    const html = readFileSync(report, 'utf8');
    const ids = [...html.matchAll(/ id="([^"]*)"/g)].map((m) => m[1]!);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]+$/);
    const links = [...html.matchAll(/href="#([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length >= 5, `${links.length} links`);
    for (const l of links) assert.ok(ids.includes(l), `#${l} has a target`);
  });

  it('should show the linked section at the top of the window, painted, for every link of the table and for a case', { timeout: 120_000 }, async () => {
    const html = readFileSync(report, 'utf8');
    const targets = [...new Set([...html.matchAll(/href="#([^"]*)"/g)].map((m) => m[1]!))];
    targets.push('c-keel-cors-27_wildcard_with_credentials');
    const url = pathToFileURL(report).href;
    for (const [i, anchor] of targets.entries()) {
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      const watch = watchPage(page, 'file://');
      await page.goto(`${url}#${anchor}`, { waitUntil: 'load' });
      // Where the target is, what is painted there, and whether the scroller (main.page) is at its end.
      const at = (await page.evaluate(`(() => {
        const el = document.getElementById(${JSON.stringify(anchor)});
        if (!el) return undefined;
        const box = el.getBoundingClientRect();
        const hit = document.elementFromPoint(Math.min(box.left + 40, innerWidth - 1), Math.max(0, box.top) + 12);
        const s = document.querySelector('main.page');
        return { top: box.top, inside: !!hit && el.contains(hit), bottom: Math.ceil(s.scrollTop + s.clientHeight) >= s.scrollHeight - 1, scrolled: s.scrollTop };
      })()`)) as { top: number; inside: boolean; bottom: boolean; scrolled: number } | undefined;
      assert.ok(at, `#${anchor} exists`);
      assert.ok(at.inside, `#${anchor}: what is painted at its place belongs to it (${JSON.stringify(at)})`);
      assert.ok(at.top >= -1 && (at.top <= 12 || at.bottom), `#${anchor} is at the top of the window, or the page is scrolled to its end (${JSON.stringify(at)})`);
      if (i === 0) await page.screenshot({ path: join(TEST_OUTPUT, 'conformance-report-anchor.png') });
      assert.deepEqual(watch.problems, []);
      await page.close();
    }
  });

  it('should be painted in a headless Chromium screenshot taken at a section link (chromium --headless --screenshot)', { timeout: 120_000 }, async () => {
    const html = readFileSync(report, 'utf8');
    const anchor = /href="#(b-routing-405)"/.exec(html)?.[1];
    assert.ok(anchor, 'the report links the routing 405 section');
    const shot = join(dir, 'shot.png');
    // A document scrolled to a fragment comes out blank this way; the report scrolls inside main.page.
    const r = spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', `--screenshot=${shot}`, '--window-size=1000,700', `${pathToFileURL(report).href}#${anchor}`], { timeout: 60_000 });
    assert.ok(existsSync(shot), `chromium wrote no screenshot: ${r.stderr?.toString().slice(-500)}`);
    copyFileSync(shot, join(TEST_OUTPUT, 'conformance-report-anchor-cli.png'));
    // Count the pixels that are not white, reading the PNG back in the browser.
    const page = await browser.newPage();
    await page.setContent(`<img id="i" src="data:image/png;base64,${readFileSync(shot).toString('base64')}">`);
    const inked = (await page.evaluate(`(async () => {
      const img = document.getElementById('i');
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
      return n / (c.width * c.height);
    })()`)) as number;
    await page.close();
    assert.ok(inked > 0.01, `the screenshot has the section painted (${(inked * 100).toFixed(2)}% inked pixels)`);
  });
});

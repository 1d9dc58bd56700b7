/**
 * Headless Chromium for page tests (Debian's `chromium`, driven by playwright-core). Tests skip with
 * `CHROMIUM_SKIP` as their reason when the browser is absent.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots land here (git-ignored). */
export const TEST_OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
export const CHROMIUM_SKIP: string | false = existsSync(CHROMIUM) ? false : `skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KEEL_CHROMIUM)`;

/** The flags a closed network needs: no background networking, no component updates (env/machines/node.md). */
export function launchChromium(): Promise<Browser> {
  mkdirSync(TEST_OUTPUT, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Record requests that leave `origin` and console / page errors while a test drives `page`. */
export function watchPage(page: Page, origin: string): { external: string[]; problems: string[] } {
  const external: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')) external.push(u);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  return { external, problems };
}

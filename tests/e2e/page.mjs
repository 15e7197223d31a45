// The page under test, shared by the end-to-end tests: the loopback
// server, Debian's Chromium (with the flags this closed network needs:
// without the background-networking ones Chromium's own connections are
// refused, many at a time) and a page that collects the errors it shows.
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';

/** Starts the server and the browser and opens the inspector, empty. */
export async function openInspector(serverOptions = {}) {
  return openPage(await startServer(serverOptions));
}

/** Starts the browser and opens the inspector from `server` (its `url`), empty. */
export async function openPage(server) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  // 1,280 px wide: the narrowest screen the page is laid out for (every name and shape readable).
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(server.url);
  await page.waitForSelector('body[data-state="empty"]');
  return { server, browser, page, errors };
}

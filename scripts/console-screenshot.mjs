// Takes the README's screenshot of the web console: start `npm start`, wait until the console is
// live, then `node scripts/console-screenshot.mjs [url] [out.png]` (Debian's chromium, headless).
import { chromium } from 'playwright-core';

const url = process.argv[2] ?? 'http://127.0.0.1:8088/';
const out = process.argv[3] ?? new URL('../docs/images/console.png', import.meta.url).pathname;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: 60_000 });
  // Let the live charts draw a few points before the picture is taken.
  await page.waitForFunction(() => document.querySelectorAll('tr[data-pool]').length > 0, undefined, { timeout: 60_000 });
  await page.waitForTimeout(5_000);
  await page.screenshot({ path: out, fullPage: false });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}

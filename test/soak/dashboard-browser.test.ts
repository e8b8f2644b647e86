/**
 * The dashboard in a real browser: Debian's Chromium, headless, driven by playwright-core. The page
 * loads with every server; a server process killed shows its new state within 2 s and `ready`
 * again once it is back; the diagram lights the current state; no request leaves 127.0.0.1; a
 * thousand servers stay usable (counts, filter, a virtualized list). The screenshot in
 * docs/operations.md is taken here (docs/images/dashboard.png).
 */
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, type ServerConfigInput, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startSdkExampleProcess, type SdkExampleProcess } from '../../servers/fixture-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESTART = {
  maxRestarts: 1000,
  withinMs: 60_000,
  backoff: { initialMs: 100, maxMs: 400, factor: 2, jitter: 0 },
};

let profile: string;
let browser: BrowserContext;
let fixture: HttpFixture;
let victim: SdkExampleProcess;

beforeAll(async () => {
  profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-'));
  // A fresh profile of its own (playwright-core's persistent context is how a user-data dir is given).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    viewport: { width: 1480, height: 920 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  fixture = await startHttpFixture();
  victim = await startSdkExampleProcess({ unknownSessionStatus: 404 });
});

afterAll(async () => {
  await browser?.close();
  await victim?.close();
  await fixture?.close();
  rmSync(profile, { recursive: true, force: true });
});

/** Opens the page; every request the browser makes is recorded. */
async function open(url: string): Promise<{ page: Page; requests: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(url);
  return { page, requests };
}

/** The page's document, as the functions run in the browser see it. */
declare const document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null };

const rowState = (page: Page, server: string) =>
  page.locator(`#rows .row[data-server="${server}"]`).getAttribute('data-state', { timeout: 1_000 });

describe('the dashboard in Chromium', () => {
  let sup: Supervisor;
  afterAll(async () => {
    await sup?.stop();
  });

  it('shows every server live: a killed server within 2 s, ready again once back, its machine lit', async () => {
    const servers: Record<string, ServerConfigInput> = {
      // `proof: 'server'`: a keepalive child of its own, whose machine the page lights (an HTTP server
      // otherwise shares its origin's keepalive and has none).
      victim: {
        url: victim.url,
        restart: RESTART,
        keepalive: { intervalMs: 500, timeoutMs: 400, maxMissed: 1, proof: 'server' },
      },
      broken: { url: 'http://127.0.0.1:9/mcp', restart: { ...RESTART, maxRestarts: 2 } },
      later: { url: fixture.url, disabled: true },
    };
    for (let i = 1; i <= 12; i++) servers[`docs-${String(i).padStart(2, '0')}`] = { url: fixture.url };
    sup = createSupervisor({ servers });
    await sup.start();
    const dashboard = await sup.dashboard();
    const origin = new URL(dashboard.url).origin;
    const { page, requests } = await open(dashboard.url);
    try {
      await expect.poll(() => page.locator('#count').textContent()).toBe('15 of 15 servers');
      await expect.poll(() => rowState(page, 'victim')).toBe('ready');
      expect(await rowState(page, 'later')).toBe('disabled');

      // The selected server's machine: the current state lit, nested path included, and its children's.
      await page.locator('#rows .row[data-server="victim"]').click();
      const lit = (machine: string) =>
        page
          .locator(`svg[data-machine="${machine}"] .state.lit`)
          .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-state')));
      await expect.poll(() => lit('connection')).toEqual(['ready', 'ready.serving']);
      await expect.poll(() => lit('keepalive')).toHaveLength(1);
      // Serving, its GET stream open: the listener handed the stream over and was stopped, so no
      // listener machine is lit (a listener lives only while it opens a stream or decides a resume).
      await expect.poll(() => lit('listener')).toHaveLength(0);

      // A few calls for the activity log.
      for (let i = 0; i < 3; i++) await sup.server('victim').callTool('echo', { text: `hello ${i}` });
      await sup.server('docs-01').callTool('echo', { text: 'hi' });
      await expect.poll(() => page.locator('#calls .call').count()).toBe(4);

      // Killed: the row says so within 2 s (waited for in the page, from the kill on).
      await victim.kill();
      const killedAt = Date.now();
      // A function, not a string: the page's Content-Security-Policy forbids evaluating strings.
      await page.waitForFunction(
        () => document.querySelector('#rows .row[data-server="victim"]')?.getAttribute('data-state') !== 'ready',
        undefined,
        { timeout: 2_000, polling: 50 },
      );
      expect(Date.now() - killedAt).toBeLessThan(2_000);
      await expect.poll(() => lit('connection')).not.toContain('ready');
      await victim.start();
      await page.waitForFunction(
        () => document.querySelector('#rows .row[data-server="victim"]')?.getAttribute('data-state') === 'ready',
        undefined,
        { timeout: 15_000, polling: 50 },
      );
      await expect.poll(() => lit('connection')).toEqual(['ready', 'ready.serving']);
      // Its timeline tells the way down and back, with causes.
      await expect.poll(() => page.locator('ol.timeline li').count()).toBeGreaterThanOrEqual(3);

      // The broken one says why.
      await expect
        .poll(() => page.locator('#rows .row[data-server="broken"]').textContent())
        .toMatch(/ECONNREFUSED|refused/i);

      // Filter and summary.
      await page.locator('#filter').fill('docs-0');
      await expect.poll(() => page.locator('#count').textContent()).toBe('9 of 15 servers');
      await page.locator('#filter').fill('');
      await expect.poll(() => page.locator('#summary button[data-state="ready"]').textContent()).toBe('ready 13');

      // For the docs: the page as an operator sees it, the victim selected.
      await page.locator('#rows .row[data-server="victim"]').click();
      await expect.poll(() => lit('connection')).toEqual(['ready', 'ready.serving']);
      mkdirSync(join(ROOT, 'docs/images'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'docs/images/dashboard.png') });

      // Nothing but the dashboard itself was asked for.
      expect(requests.length).toBeGreaterThan(3);
      expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
      // And without the token, nothing.
      expect((await fetch(`${origin}/`)).status).toBe(401);
      expect((await fetch(`${origin}/events`)).status).toBe(401);
    } finally {
      await page.close();
      await dashboard.close();
    }
  });

  it('stays usable with 1,000 servers: counts by state, a filter, only the rows in view drawn, a storm of calls', async () => {
    await sup.stop();
    const servers: Record<string, ServerConfigInput> = {};
    for (let i = 0; i < 997; i++) servers[`srv-${String(i).padStart(4, '0')}`] = { url: fixture.url, keepalive: false };
    for (let i = 0; i < 3; i++) servers[`spare-${i}`] = { url: fixture.url, disabled: true };
    sup = createSupervisor({ servers });
    await sup.start();
    const dashboard = await sup.dashboard();
    const origin = new URL(dashboard.url).origin;
    const { page, requests } = await open(dashboard.url);
    try {
      await expect.poll(() => page.locator('#count').textContent()).toBe('1000 of 1000 servers');
      await expect.poll(() => page.locator('#summary button[data-state="ready"]').textContent()).toBe('ready 997');
      await expect.poll(() => page.locator('#summary button[data-state="disabled"]').textContent()).toBe('disabled 3');
      // Virtualized: a screenful of rows in the document, not a thousand.
      expect(await page.locator('#rows .row').count()).toBeLessThan(80);
      await page.locator('#viewport').evaluate((node) => (node.scrollTop = node.scrollHeight));
      await expect.poll(() => page.locator('#rows .row[data-server="srv-0996"]').count()).toBe(1);
      await page.locator('#filter').fill('srv-09');
      await expect.poll(() => page.locator('#count').textContent()).toBe('97 of 1000 servers');
      // A change reaches the page within a second or so, among the thousand.
      await sup.disable('srv-0500');
      await page.locator('#filter').fill('srv-0500');
      await expect.poll(() => rowState(page, 'srv-0500'), { timeout: 2_000 }).toBe('disabled');
      await expect.poll(() => page.locator('#summary button[data-state="disabled"]').textContent()).toBe('disabled 4');
      // A storm of calls over the fleet: the log lists a bounded sample and says how many it left out.
      const handles = Object.keys(servers)
        .filter((name) => name.startsWith('srv-') && name !== 'srv-0500')
        .map((name) => sup.server(name));
      await Promise.all(Array.from({ length: 600 }, (_, i) => handles[i % handles.length]!.callTool('echo', {})));
      await expect.poll(() => page.locator('#calls-note').textContent()).toContain('600 calls since the page opened');
      expect(await page.locator('#calls .call').count()).toBeLessThanOrEqual(200);
      expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    } finally {
      await page.close();
      await dashboard.close();
    }
  });
});

/**
 * The dashboard's layout in a real browser (Debian's Chromium, headless, playwright-core) at
 * 1280 × 800, 1400 × 900 and 1920 × 1080 with the detail pane open: every column header whole
 * (none cut by an ellipsis), the "why" column without the server's own `[name]` prefix, the page's
 * regions and the header's cells not overlapping, and the machine shown as its current state and
 * that state's exits, large, with the whole machine at full size on demand. A screenshot of each
 * size is written to .tmp/dashboard-<width>x<height>.png for people to look at.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOTS = join(ROOT, '.tmp');

let profile: string;
let browser: BrowserContext;
let fixture: HttpFixture;
let sup: Supervisor;

beforeAll(async () => {
  profile = mkdtempSync(join(tmpdir(), 'dashboard-layout-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  fixture = await startHttpFixture();
  sup = createSupervisor({
    servers: {
      docs: { url: fixture.url },
      'a-server-with-a-long-name': { url: fixture.url },
      broken: {
        url: 'http://127.0.0.1:9/mcp',
        restart: { maxRestarts: 1, withinMs: 60_000, backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 } },
        revive: false,
      },
    },
  });
  await sup.start();
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await sup?.stop();
  await browser?.close();
  await fixture?.close();
  rmSync(profile, { recursive: true, force: true });
});

interface Box {
  name: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Pairs of boxes that share more than a pixel of area. */
function overlaps(boxes: readonly Box[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i]!, boxes[j]!];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) found.push(`${a.name} × ${b.name}`);
    }
  return found;
}

describe('the dashboard layout in Chromium', () => {
  it.each([
    [1280, 800],
    [1400, 900],
    [1920, 1080],
  ])(
    'at %i × %i with the detail pane open: headers whole, why without [server], nothing overlapping, the machine readable',
    async (width, height) => {
      const dashboard = await sup.dashboard();
      const page = await browser.newPage();
      await page.setViewportSize({ width, height });
      try {
        await page.goto(dashboard.url);
        await expect.poll(() => page.locator('#count').textContent()).toBe('3 of 3 servers');
        await expect
          .poll(() => page.locator('#rows .row[data-server="broken"]').getAttribute('data-state'))
          .toBe('failed');
        await page.locator('#rows .row[data-server="broken"]').click();
        await expect
          .poll(() => page.locator('.diagram[data-diagram="connection"] .focus .now').textContent())
          .toMatch(/^failed/);

        // Every column header whole: nothing cut by its ellipsis.
        const headers = await page
          .locator('.row.head > span')
          .evaluateAll((spans) =>
            spans.map((span) => ({ text: span.textContent, cut: span.scrollWidth > span.clientWidth })),
          );
        expect(headers.filter((header) => header.cut)).toEqual([]);
        expect(headers).toHaveLength(10);

        // The why column says why, not whose: the row names the server already.
        const why = await page.locator('#rows .row[data-server="broken"] > span').nth(4).textContent();
        expect(why).toMatch(/refused|ECONNREFUSED/i);
        expect(why).not.toContain('[broken]');

        // The page's regions, and the header's cells, side by side, never over each other.
        const box = (selector: string) =>
          page.locator(selector).evaluateAll(
            (nodes, name) =>
              nodes.map((node, i) => {
                const r = node.getBoundingClientRect();
                return { name: `${name}[${i}]`, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
              }),
            selector,
          );
        const regions = [
          ...(await box('header')),
          ...(await box('#list')),
          ...(await box('#detail')),
          ...(await box('#activity')),
        ];
        expect(regions).toHaveLength(4);
        expect(overlaps(regions)).toEqual([]);
        const cells = await box('.row.head > span');
        expect(overlaps(cells)).toEqual([]);
        // … and in view: not behind the detail pane nor past the list's own edge (a scroll would hide them).
        const list = regions.find((region) => region.name.startsWith('#list'))!;
        expect(cells.filter((cell) => cell.right > list.right + 0.5).map((cell) => cell.name)).toEqual([]);
        // The detail pane fits the window; the list keeps at least its columns' width or scrolls itself.
        const detail = regions.find((region) => region.name.startsWith('#detail'))!;
        expect(detail.right).toBeLessThanOrEqual(width + 0.5);

        // The machine: the current state and its exits large; the whole machine folded, at full size when opened.
        const focus = page.locator('.diagram[data-diagram="connection"] .focus');
        expect(
          parseFloat(
            await focus
              .locator('.now')
              .evaluate(
                (node) =>
                  (globalThis as unknown as { getComputedStyle(n: unknown): { fontSize: string } }).getComputedStyle(
                    node,
                  ).fontSize,
              ),
          ),
        ).toBeGreaterThanOrEqual(18);
        const exits = await focus.locator('ul.exits li').allTextContents();
        expect(exits.length).toBeGreaterThan(0);
        expect(exits.join('\n')).toMatch(/→ ?connecting|→ ?closing/);
        const whole = page.locator('.diagram[data-diagram="connection"] details.whole');
        expect(await whole.evaluate((node) => (node as unknown as { open: boolean }).open)).toBe(false);
        await page.screenshot({ path: join(SHOTS, `dashboard-${width}x${height}.png`) });
        await whole.locator('summary').click();
        const svg = whole.locator('svg');
        const drawn = await svg.evaluate((node) => ({
          shown: node.getBoundingClientRect().width,
          own: Number(node.getAttribute('width')),
        }));
        // Not shrunk to the pane: its 11 px labels stay 11 px (the pane scrolls).
        expect(drawn.shown).toBeCloseTo(drawn.own, 0);
        await page.screenshot({ path: join(SHOTS, `dashboard-${width}x${height}-machine.png`) });
      } finally {
        await page.close();
        await dashboard.close();
      }
    },
    60_000,
  );
});

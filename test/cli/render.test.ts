/** The watch view's text: the table, the lines, and the redrawn screen on a terminal. */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { watch } from '../../src/cli/watch.js';
import { formatDuration, formatTransition, renderTable, rowsOf, truncate } from '../../src/cli/render.js';
import { createSupervisor } from '../../src/index.js';
import type { ServerStatus } from '../../src/handle/server-handle.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';

/** The escape character that starts every ANSI sequence. */
const ESC = String.fromCharCode(27);
const status = (overrides: Partial<ServerStatus>): ServerStatus => ({
  name: 'docs',
  state: 'ready',
  transport: 'http',
  protocolVersion: '2025-11-25',
  serverInfo: undefined,
  sessionId: '[redacted]',
  restarts: 2,
  lastError: undefined,
  keepalive: { lastRttMs: 3.4, missed: 0 },
  requests: { inFlight: 0, waiting: 0 },
  ...overrides,
});

describe('render', () => {
  it('formats durations', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_400)).toBe('12s');
    expect(formatDuration(184_000)).toBe('3m04s');
    expect(formatDuration(7_500_000)).toBe('2h05m');
  });

  it('renders the columns; the era as 2025-era or 2026-07-28; session age only while ready; errors cut to the width', () => {
    const rows = rowsOf(
      {
        docs: status({ era: 'legacy' }),
        next: status({ name: 'next', era: 'modern', protocolVersion: '2026-07-28', sessionId: undefined }),
        old: status({
          name: 'old',
          state: 'reconnecting',
          transport: 'sse',
          restarts: 0,
          keepalive: { lastRttMs: undefined, missed: 1 },
          lastError: `HTTP 503 ${'x'.repeat(200)}`,
        }),
      },
      new Map([
        ['docs', 1_000],
        ['old', 1_000],
      ]),
      66_000,
    );
    const lines = renderTable(rows, { color: false, width: 90 });
    expect(lines[0]).toMatch(/^SERVER\s+STATE\s+TRANSPORT\s+ERA\s+SESSION\s+RESTARTS\s+RTT\s+LAST ERROR$/);
    expect(lines[1]).toMatch(/^docs\s+ready\s+http\s+2025-era\s+1m05s\s+2\s+3ms$/);
    expect(lines[2]).toMatch(/^next\s+ready\s+http\s+2026-07-28\s+-\s+2\s+3ms$/);
    expect(lines[3]).toMatch(/^old\s+reconnecting\s+sse\s+-\s+-\s+0\s+-\s+HTTP 503 x+…$/);
    expect(lines[3]!.length).toBeLessThanOrEqual(90);
    expect(lines.join('\n')).not.toContain('legacy');
    expect(lines.join('\n')).not.toContain('\x1b[');
    expect(renderTable(rows, { color: true }).join('\n')).toContain('\x1b[32mready');
  });

  it('keeps showing the last error after the server recovered; a current one wins', () => {
    const remembered = new Map([['docs', 'connection lost: socket hang up']]);
    expect(rowsOf({ docs: status({}) }, new Map(), 0, remembered)[0]!.lastError).toBe(
      'connection lost: socket hang up',
    );
    expect(rowsOf({ docs: status({ lastError: 'HTTP 503' }) }, new Map(), 0, remembered)[0]!.lastError).toBe(
      'HTTP 503',
    );
  });

  it('formats a transition as one line', () => {
    const line = formatTransition(
      {
        server: 'docs',
        from: 'ready',
        to: 'reconnecting',
        cause: 'connection lost',
        error: 'socket hang up\nat x',
        at: Date.UTC(2025, 0, 1, 12, 0, 1, 234),
      },
      { color: false },
    );
    expect(line).toBe('12:00:01.234  docs  ready -> reconnecting  (connection lost: socket hang up at x)');
    expect(truncate('abcdef', 4)).toBe('abc…');
  });
});

describe('watch on a terminal', () => {
  let fixture: HttpFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('redraws the table in place with ANSI and restores the cursor at the end', async () => {
    fixture = await startHttpFixture();
    const out = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 20 });
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const sup = createSupervisor({ servers: { docs: { url: fixture.url } } });
    const code = await watch(sup, {
      out: out as unknown as NodeJS.WriteStream,
      durationMs: 1_500,
      handleSignals: false,
      notes: ['hello'],
    });
    expect(code).toBe(0);
    const frames = text.split('\x1b[H').slice(1);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(text.startsWith('\x1b[?25l\x1b[2J')).toBe(true);
    expect(text.endsWith('\x1b[?25h')).toBe(true);
    expect(frames.some((frame) => new RegExp(`docs\\s+${ESC}\\[32mready${ESC}\\[0m\\s+http`).test(frame))).toBe(true);
    expect(frames.some((frame) => frame.includes('docs  initializing -> ready  (initialized)'))).toBe(true);
    expect(frames.at(-1)).toMatch(new RegExp(`docs\\s+${ESC}\\[2mclosed`));
    expect(frames.at(-1)).toContain('hello');
  });
});

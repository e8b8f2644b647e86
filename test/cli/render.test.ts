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

  it('renders the columns; the era as status() says it (legacy, modern); session age only while ready; errors cut to the width', () => {
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
    expect(lines[1]).toMatch(/^docs\s+ready\s+http\s+legacy\s+1m05s\s+2\s+3ms$/);
    expect(lines[2]).toMatch(/^next\s+ready\s+http\s+modern\s+-\s+2\s+3ms$/);
    expect(lines[3]).toMatch(/^old\s+reconnecting\s+sse\s+-\s+-\s+0\s+-\s+HTTP 503 x+…$/);
    expect(lines[3]!.length).toBeLessThanOrEqual(90);
    expect(lines.join('\n')).not.toContain('2025-era');
    // Without a terminal's width (a pipe, a file) nothing is cut.
    expect(renderTable(rows, { color: false })[3]).toMatch(/HTTP 503 x{200}$/);
    expect(lines.join('\n')).not.toContain('\x1b[');
    expect(renderTable(rows, { color: true }).join('\n')).toContain('\x1b[32mready');
  });

  it('keeps showing the last error after the server recovered, with its age and dimmed; a current one wins, in red', () => {
    const remembered = new Map([['docs', { text: 'connection lost: socket hang up', at: 1_000 }]]);
    const [past] = rowsOf({ docs: status({}) }, new Map(), 125_000, remembered);
    expect(past!.lastError).toBe('2m04s ago: connection lost: socket hang up');
    expect(renderTable([past!], { color: true })[1]).toContain('\x1b[2m2m04s ago: connection lost');
    const [current] = rowsOf(
      { docs: status({ state: 'reconnecting', lastError: 'HTTP 503' }) },
      new Map(),
      0,
      remembered,
    );
    expect(current!.lastError).toBe('HTTP 503');
    expect(renderTable([current!], { color: true })[1]).toContain('\x1b[31mHTTP 503');
    // Not ready yet: the remembered error is still the news, in red.
    const [down] = rowsOf({ docs: status({ state: 'reconnecting' }) }, new Map(), 125_000, remembered);
    expect(renderTable([down!], { color: true })[1]).toContain('\x1b[31mconnection lost');
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
    // Whole, however long (a log file gets the advice at the end); a screen cuts lines to its width.
    const advice = `no MCP endpoint at http://127.0.0.1:9/mcp ${'(check the path) '.repeat(20)}end of the advice`;
    const long = formatTransition(
      { server: 'docs', from: 'connecting', to: 'failed', cause: 'x', error: advice, at: 0 },
      { color: false },
    );
    expect(long.endsWith('end of the advice)')).toBe(true);
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

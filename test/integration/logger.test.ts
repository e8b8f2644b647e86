/** The `logger` option: structured entries for transitions, restarts, fallbacks; no secrets. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, createSupervisor, type Logger, type ServerHandle } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startLegacySseFixture } from '../../servers/legacy-sse-fixture.js';
import { FIXTURE as STDIO_FIXTURE } from '../transports/stdio/helpers.js';
import { nextTransition, quickRestart, refusingUrl } from './helpers.js';

interface Entry {
  level: string;
  fields: Record<string, unknown>;
  message?: string | undefined;
}

function recordingLogger(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message?: string) =>
    entries.push({ level, fields, message });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const SRC = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../servers/http-fixture.ts', import.meta.url));

/**
 * A child process that connects without a logger, lives through a session expiry, a server that
 * refuses connections until it is failed, and close; its real stdout and stderr are returned.
 * `LOG_TO_CONSOLE` gives it a console logger instead (the control).
 */
function runConnectingProcess(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    const { connect } = await import(${JSON.stringify(SRC)});
    const { startHttpFixture } = await import(${JSON.stringify(FIXTURE)});
    const logger = process.env.LOG_TO_CONSOLE ? { debug: console.log, info: console.log, warn: console.warn, error: console.error } : undefined;
    const f = await startHttpFixture();
    const handle = await connect({ url: f.url }, { name: 'quiet', logger });
    f.expireAllSessions();
    await handle.callTool('echo', { text: 'x' });
    await handle.close();
    await f.close();
    const refused = { url: f.url, revive: false, restart: { maxRestarts: 1, backoff: { initialMs: 1, maxMs: 1, jitter: 0 } } };
    await connect(refused, { name: 'down', logger }).then(() => { throw new Error('connected to a closed server'); }, () => {});
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

describe('logger', () => {
  it('logs session expiry and the heal, without the session id or the bearer token', async () => {
    const f: HttpFixture = await startHttpFixture();
    cleanups.push(() => f.close());
    const logger = recordingLogger();
    const handle: ServerHandle = await connect(
      { url: f.url, headers: { authorization: 'Bearer log-secret' } },
      { name: 'fx', logger },
    );
    cleanups.push(() => handle.close());
    const oldSession = [...f.sessions][0]!;
    f.expireAllSessions();
    await handle.callTool('echo', { text: 'x' });
    const events = logger.entries.map((e) => `${e.level}:${String(e.fields.event)}`);
    expect(events).toContain('info:session expired');
    expect(logger.entries.find((e) => e.fields.event === 'session expired')?.fields).toMatchObject({
      server: 'fx',
      from: 'ready',
      to: 'expired',
    });
    const text = JSON.stringify(logger.entries);
    expect(text).not.toContain('log-secret');
    expect(text).not.toContain(oldSession);
    expect(text).not.toContain([...f.sessions][0]!);
  });

  it('logs a server going down, each restart, and giving up', async () => {
    const logger = recordingLogger();
    const sup = createSupervisor({ servers: { down: { url: await refusingUrl(), restart: quickRestart(1) } }, logger });
    cleanups.push(() => sup.stop());
    const failed = nextTransition(sup, (t) => t.to === 'failed');
    await sup.start();
    await failed;
    const events = logger.entries.map((e) => `${e.level}:${String(e.fields.event)}`);
    expect(events.filter((e) => e === 'warn:connection down')).toHaveLength(2);
    expect(events).toContain('info:restart');
    expect(logger.entries.find((e) => e.fields.event === 'restart')?.fields.restarts).toBe(1);
    expect(events.at(-1)).toBe('error:failed');
  });

  it('says at info when a server is back: connection down, restart, then ready', async () => {
    const logger = recordingLogger();
    const crashing = {
      command: process.execPath,
      args: [STDIO_FIXTURE, '--crash-after', '1'],
      protocolVersion: 'legacy',
    };
    const sup = createSupervisor({ servers: { fx: { ...crashing, restart: quickRestart(5) } }, logger });
    cleanups.push(() => sup.stop());
    await sup.start();
    const handle = sup.server('fx');
    await handle.callTool('echo', { text: 'one' });
    const back = nextTransition(sup, (t) => t.to === 'ready');
    await handle.callTool('echo', { text: 'crash' }).catch(() => {});
    await back;
    const atInfo = logger.entries.filter((e) => e.level !== 'debug').map((e) => `${e.level}:${String(e.fields.event)}`);
    expect(atInfo).toEqual(['info:ready', 'warn:connection down', 'info:restart', 'info:ready']);
    const ready = logger.entries.filter((e) => e.fields.event === 'ready').at(-1)!;
    expect(ready.fields).toMatchObject({ server: 'fx', from: 'initializing', to: 'ready', restarts: 1 });
    expect(ready.message).toMatch(/^fx: ready \(legacy, \d{4}-\d{2}-\d{2} over stdio\)$/);
  });

  it('logs the fallback from Streamable HTTP to legacy SSE', async () => {
    const f = await startLegacySseFixture();
    cleanups.push(() => f.close());
    const logger = recordingLogger();
    const handle = await connect({ url: `${f.origin}/mcp` }, { name: 'old', logger });
    cleanups.push(() => handle.close());
    const fallback = logger.entries.find((e) => e.fields.event === 'fallback');
    expect(fallback?.level).toBe('warn');
    expect(fallback?.fields).toMatchObject({
      server: 'old',
      from: 'initializing',
      to: 'connecting',
      cause: 'Streamable HTTP refused; falling back to legacy SSE',
    });
    expect(String(fallback?.fields.error)).toMatch(/HTTP 405/);
  });

  it('is silent by default: a process that connects, heals and fails writes nothing to stdout or stderr', async () => {
    const quiet = await runConnectingProcess({});
    expect(quiet).toEqual({ code: 0, stdout: '', stderr: '' });
    // The check sees the real streams: the same process with a console logger is not silent.
    const loud = await runConnectingProcess({ LOG_TO_CONSOLE: '1' });
    expect(loud.code).toBe(0);
    expect(loud.stdout + loud.stderr).toMatch(/session expired/);
  }, 90_000); // two node processes with tsx: seconds on a busy machine
});

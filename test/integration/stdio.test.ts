/**
 * stdio servers under supervision, end to end through `connect` and `createSupervisor` with the
 * fixture script as a real child process: calls, bad output, crashes and restarts, commands that
 * cannot start, and no process left behind after stop().
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  createSupervisor,
  fromMcpServersJson,
  ProtocolError,
  SpawnError,
  type ServerHandle,
  type Supervisor,
  OutcomeUnknownError,
} from '../../src/index.js';
import { startHttpFixture } from '../../servers/http-fixture.js';
import { FIXTURE, grandchildPid, isRunning, newTag, processesTagged } from '../transports/stdio/helpers.js';
import { nextTransition, quickRestart, recordTransitions } from './helpers.js';

const TAG = newTag();
const QUICK_SHUTDOWN = { closeStdinTimeoutMs: 200, sigtermTimeoutMs: 200 };
const fixture = (...args: string[]) => ({
  command: process.execPath,
  args: [FIXTURE, ...args, ...TAG],
  shutdown: QUICK_SHUTDOWN,
  // The fixture speaks the 2025 era only; these tests are about processes, not the era probe.
  protocolVersion: 'legacy',
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(() => {
  expect(processesTagged(TAG[1]!)).toEqual([]);
});

async function open(args: string[] = [], config: Record<string, unknown> = {}): Promise<ServerHandle> {
  const handle = await connect({ ...fixture(...args), ...config }, { name: 'fx' });
  cleanups.push(() => handle.close());
  return handle;
}

function supervise(servers: Parameters<typeof createSupervisor>[0]['servers']): Supervisor {
  const sup = createSupervisor({ servers, random: () => 0.5 });
  cleanups.push(() => sup.stop());
  return sup;
}

describe('stdio servers: calls', () => {
  it('connect() spawns the server; tools work; status shows stdio, the pid and the stderr tail; close() stops it', async () => {
    const handle = await open(['--stderr-lines', '2']);
    const { tools } = await handle.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo', 'pid', 'sleep']);
    expect(await handle.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    await handle.request('ping');
    const status = handle.status();
    expect(status).toMatchObject({
      state: 'ready',
      transport: 'stdio',
      sessionId: undefined,
      stderrTail: ['stderr line 1', 'stderr line 2'],
    });
    const pid = (await handle.callTool('pid')).content[0] as unknown as { text: string };
    expect(status.pid).toBe(Number(pid.text));
    await handle.close();
    expect(isRunning(status.pid!)).toBe(false);
    expect(handle.status().state).toBe('closed');
  });

  it('non-JSON stdout lines are reported as warnings and the calls still work', async () => {
    const handle = await open(['--garbage']);
    const warnings: Error[] = [];
    handle.on('warning', (error) => warnings.push(error));
    await expect(handle.callTool('echo', { text: 'a' })).resolves.toMatchObject({ content: [{ text: 'a' }] });
    await expect(handle.callTool('echo', { text: 'b' })).resolves.toMatchObject({ content: [{ text: 'b' }] });
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toBeInstanceOf(ProtocolError);
    expect(warnings[0]!.message).toMatch(/\[fx\] skipped a stdout line that is not a JSON-RPC message/);
    expect(handle.status().state).toBe('ready');
  });

  it('a line over maxMessageBytes is reported and the connection survives', async () => {
    const handle = await open(['--huge-line', String(300_000)], { maxMessageBytes: 65_536 });
    const warning = new Promise<Error>((resolve) => handle.on('warning', resolve));
    await expect(handle.callTool('echo', { text: 'after' })).resolves.toMatchObject({ content: [{ text: 'after' }] });
    expect((await warning).message).toMatch(/longer than maxMessageBytes \(65536 bytes/);
    await expect(handle.callTool('echo', { text: 'again' })).resolves.toMatchObject({ content: [{ text: 'again' }] });
    expect(handle.status().restarts).toBe(0);
  });
});

describe('stdio servers: crashes and restarts', () => {
  it('a crash fails every pending call not known safe at once with the exit code and stderr (outcome unknown), then the server is restarted', async () => {
    // It lingers a moment before exiting: the three lines all reach its pipe (a line the pipe
    // refuses reached nobody, and is sent to the next process instead: the test below).
    const sup = supervise({
      fx: { ...fixture('--crash-after', '1', '--crash-linger', '100'), restart: quickRestart(5) },
    });
    await sup.start();
    const handle = sup.server('fx');
    const firstPid = handle.status().pid!;
    await handle.callTool('echo', { text: 'one' });
    const transitions = recordTransitions(handle);
    const ready = nextTransition(handle, (e) => e.to === 'ready');
    const outcomes = await Promise.all(
      [
        handle.callTool('echo', { text: 'a' }),
        handle.callTool('sleep', { ms: 50 }),
        handle.callTool('echo', { text: 'c' }),
      ].map((p) => p.catch((e: unknown) => e)),
    );
    for (const error of outcomes) {
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect((error as OutcomeUnknownError).retryable).toBe(true);
      expect((error as Error).message).toMatch(/exited with code 3; stderr: .*fixture: crashing after 1 requests/);
    }
    await ready;
    expect(transitions.map((e) => `${e.from}->${e.to}`)).toEqual([
      'ready->reconnecting',
      'reconnecting->connecting',
      'connecting->initializing',
      'initializing->ready',
    ]);
    expect(transitions[0]!.cause).toBe('connection lost');
    const status = handle.status();
    expect(status.restarts).toBe(1);
    expect(status.pid).toBeGreaterThan(0);
    expect(status.pid).not.toBe(firstPid);
    expect(isRunning(firstPid)).toBe(false);
    await expect(handle.callTool('echo', { text: 'after the restart' })).resolves.toMatchObject({
      content: [{ text: 'after the restart' }],
    });
  });

  it('a hung server (keepalive misses) is replaced by a new process, and the hung one is stopped', async () => {
    const sup = supervise({
      fx: {
        ...fixture('--hang-after', '0'),
        restart: quickRestart(5),
        keepalive: { intervalMs: 30, timeoutMs: 100, maxMissed: 2 },
      },
    });
    const lost = nextTransition(sup, (e) => e.from === 'ready' && e.to === 'reconnecting');
    await sup.start();
    const handle = sup.server('fx');
    const firstPid = handle.status().pid!;
    const ready = nextTransition(handle, (e) => e.from === 'initializing' && e.to === 'ready');
    expect((await lost).error).toMatch(/keepalive probes in a row got no answer/);
    await ready;
    expect(handle.status().pid).not.toBe(firstPid);
    expect(isRunning(firstPid)).toBe(false);
  });

  it('a command that does not exist: connect() rejects with a fatal SpawnError naming it, after one attempt', async () => {
    const error = (await connect(
      { command: 'mcp-supervisor-no-such-command', restart: quickRestart(5) },
      { name: 'missing' },
    ).catch((e: unknown) => e)) as SpawnError;
    expect(error).toBeInstanceOf(SpawnError);
    expect(error.fatal).toBe(true);
    expect(error.message).toMatch(
      /\[missing\] cannot start the server command 'mcp-supervisor-no-such-command' in .*ENOENT/,
    );
  });

  it('a command that does not exist ends in failed without restarts (supervisor)', async () => {
    const sup = supervise({ missing: { command: 'mcp-supervisor-no-such-command', restart: quickRestart(5) } });
    const transitions = recordTransitions(sup);
    const failed = nextTransition(sup, (e) => e.to === 'failed');
    await sup.start();
    await failed;
    const status = sup.status().missing!;
    expect(status).toMatchObject({ state: 'failed', restarts: 0, pid: undefined, stderrTail: [] });
    expect(status.lastError).toMatch(/cannot start the server command 'mcp-supervisor-no-such-command'/);
    expect(transitions.filter((e) => e.to === 'connecting')).toHaveLength(1);
    await expect(sup.server('missing').callTool('echo')).rejects.toThrow(
      /the server has failed: .*mcp-supervisor-no-such-command/,
    );
  });

  it('a server that exits at once ends in failed without restarts, with its exit code and stderr', async () => {
    const sup = supervise({ broken: { ...fixture('--exit-at-once', '1'), restart: quickRestart(5) } });
    const transitions = recordTransitions(sup);
    const failed = nextTransition(sup, (e) => e.to === 'failed');
    await sup.start();
    await failed;
    const status = sup.status().broken!;
    expect(status.state).toBe('failed');
    expect(status.restarts).toBe(0);
    expect(status.lastError).toMatch(
      /exited with code 1 before completing its first MCP handshake; stderr: fixture: refusing to start/,
    );
    expect(status.stderrTail).toEqual(['fixture: refusing to start (--exit-at-once)']);
    expect(transitions.filter((e) => e.to === 'connecting')).toHaveLength(1);
    await expect(connect(fixture('--exit-at-once', '1'), { name: 'broken' })).rejects.toMatchObject({
      fatal: true,
      message: expect.stringMatching(/exited with code 1/),
    });
  });
});

describe('stdio servers: nothing left behind', () => {
  it('stop() ends the server and its grandchild; the SIGTERM-ignoring server is killed', async () => {
    const sup = supervise({
      family: fixture('--grandchild'),
      stubborn: {
        ...fixture('--linger', '--ignore-sigterm'),
        shutdown: { closeStdinTimeoutMs: 50, sigtermTimeoutMs: 50 },
      },
    });
    await sup.start();
    const family = sup.status().family!;
    const grandchild = grandchildPid(family.stderrTail!)!;
    const pids = [family.pid!, grandchild, sup.status().stubborn!.pid!];
    expect(pids.every(isRunning)).toBe(true);
    await sup.stop();
    expect(pids.filter(isRunning)).toEqual([]);
    expect(processesTagged(TAG[1]!)).toEqual([]);
  });

  it('stop() during a restart leaves no process behind', async () => {
    const sup = supervise({ fx: { ...fixture('--crash-after', '0'), restart: quickRestart(5) } });
    await sup.start();
    const connecting = nextTransition(sup, (e) => e.to === 'connecting');
    await sup
      .server('fx')
      .callTool('echo')
      .catch(() => {});
    await connecting;
    await sup.stop();
    expect(processesTagged(TAG[1]!)).toEqual([]);
  });

  it('an mcpServers file mixing stdio and URL servers runs both under one supervisor', async () => {
    const http = await startHttpFixture();
    cleanups.push(() => http.close());
    const servers = fromMcpServersJson({
      mcpServers: {
        local: { command: process.execPath, args: [FIXTURE, ...TAG], env: { LOG_LEVEL: 'debug' } },
        remote: { url: http.url },
      },
    });
    const sup = supervise(servers);
    await sup.start();
    expect(sup.status()).toMatchObject({
      local: { state: 'ready', transport: 'stdio' },
      remote: { state: 'ready', transport: 'http', pid: undefined, stderrTail: undefined },
    });
    await expect(sup.server('local').callTool('echo', { text: 'l' })).resolves.toMatchObject({
      content: [{ text: 'l' }],
    });
    await expect(sup.server('remote').callTool('echo', { text: 'r' })).resolves.toMatchObject({
      content: [{ text: 'r' }],
    });
    await sup.stop();
    expect(processesTagged(TAG[1]!)).toEqual([]);
  });
});

describe('stdio servers: a call written to a process that already died', () => {
  /**
   * Kills the server and waits, without yielding, until it is a zombie whose files are closed: its
   * exit is not noticed yet. The leader reads `Z` while its other threads still exit, and the pipe's
   * read end closes only with the last of them: until then a write still reaches the pipe.
   */
  function killUnnoticed(pid: number): void {
    process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 5_000;
    while (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) || openFiles(pid) > 0) {
      if (Date.now() > deadline) throw new Error(`process ${pid} did not die`);
    }
  }

  function openFiles(pid: number): number {
    try {
      return readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      return 0;
    }
  }

  function callLog(): { path: string; lines(): string[] } {
    const dir = mkdtempSync(join(tmpdir(), 'stdio-calls-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'calls.log');
    return { path, lines: () => (existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : []) };
  }

  // retry 'always' only: with the default retry, a write to the killed server was seen to succeed (something
  // still held the pipe's read end), so whether the failed write is held is not shown here yet (issue 42 item 4).
  it.each(['always'] as const)(
    'the write failed, so nothing was delivered: the call (retry %s) is held and sent once after the restart',
    async (retry) => {
      const log = callLog();
      const sup = supervise({ fx: { ...fixture('--call-log', log.path), restart: quickRestart(5) } });
      await sup.start();
      const handle = sup.server('fx');
      await handle.callTool('echo', { text: 'before' });
      const firstPid = handle.status().pid!;
      killUnnoticed(firstPid);
      const answer = await handle.callTool('echo', { text: 'written to the dead' }, { timeoutMs: 10_000, retry });
      expect(answer.content[0]!.text).toBe('written to the dead');
      const secondPid = handle.status().pid!;
      expect(secondPid).not.toBe(firstPid);
      // Executed once, by the new process: never by the dead one, never twice.
      expect(log.lines()).toEqual([`${firstPid} before`, `${secondPid} written to the dead`]);
    },
  );
});

/**
 * The stdio transport against real child processes (docs/client-requirements.md §1.14, items 59-62): spawn,
 * newline framing, garbage and oversized lines, stderr, process death, and the shutdown order
 * close stdin → SIGTERM → SIGKILL on the whole process group.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionClosedError, ProtocolError, SpawnError } from '../../../src/index.js';
import type { StdioTransport } from '../../../src/transports/stdio/stdio.js';
import { readEvidence } from '../../../src/runtime/recovery/evidence.js';
import {
  callTool,
  fixtureTransport,
  grandchildPid,
  initialize,
  isRunning,
  newTag,
  RecordingSink,
  type TransportOverrides,
} from './helpers.js';

const opened: StdioTransport[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

async function start(
  args: string[],
  overrides: TransportOverrides = {},
): Promise<{ transport: StdioTransport; sink: RecordingSink }> {
  const sink = new RecordingSink();
  const transport = fixtureTransport(sink, [...args, ...newTag()], overrides);
  opened.push(transport);
  await transport.open();
  return { transport, sink };
}

describe('stdio transport: framing', () => {
  it('spawns the process, exchanges one JSON line per message, and reports no session', async () => {
    const { transport, sink } = await start([]);
    expect(transport.kind).toBe('stdio');
    expect(transport.isOpen).toBe(true);
    expect(transport.pid).toBeGreaterThan(0);
    expect(transport.hasSession).toBe(false);
    const init = (await initialize(transport, sink)) as { result: { protocolVersion: string } };
    expect(init.result.protocolVersion).toBe('2025-11-25');
    // A raw newline inside a string stays escaped: still one line, and it round-trips.
    await callTool(transport, 2, 'echo', { text: 'two\nlines\r\n' });
    expect(await sink.response(2)).toMatchObject({ result: { content: [{ text: 'two\nlines\r\n' }] } });
    expect(sink.streamErrors).toEqual([]);
  });

  it('has no listening stream', async () => {
    const { transport } = await start([]);
    expect(await transport.openListener()).toEqual({ kind: 'unavailable', status: 0 });
  });

  it('reports non-JSON stdout lines and goes on; strips \\r from CRLF lines', async () => {
    const { transport, sink } = await start(['--garbage', '--crlf']);
    await initialize(transport, sink);
    await callTool(transport, 2, 'echo', { text: 'still works' });
    expect(await sink.response(2)).toMatchObject({ result: { content: [{ text: 'still works' }] } });
    const error = await sink.streamError();
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/not a JSON-RPC message: this line is not JSON/);
    expect(error.message).not.toContain('\r');
    expect(sink.streamErrors.length).toBeGreaterThanOrEqual(2); // one per response
  });

  it('skips a line longer than maxMessageBytes, reports it once, and keeps reading', async () => {
    const { transport, sink } = await start(['--huge-line', String(200_000)], { maxMessageBytes: 10_000 });
    await initialize(transport, sink);
    await callTool(transport, 2, 'echo', { text: 'after the huge line' });
    expect(await sink.response(2)).toMatchObject({ result: { content: [{ text: 'after the huge line' }] } });
    expect(sink.streamErrors).toHaveLength(1);
    expect(sink.streamErrors[0]!.message).toMatch(/longer than maxMessageBytes \(10000 bytes/);
    expect(transport.isOpen).toBe(true);
  });
});

describe('stdio transport: writes', () => {
  it('sends the lines of one tick together, in order, and every one is answered', async () => {
    const { transport, sink } = await start([]);
    await initialize(transport, sink);
    const ids = Array.from({ length: 64 }, (_, i) => 100 + i);
    // All in the same tick: the first is written at once, the other 63 leave in one writev.
    await Promise.all(ids.map((id) => callTool(transport, id, 'echo', { text: `call ${id}` })));
    for (const id of ids)
      expect(await sink.response(id)).toMatchObject({ result: { content: [{ text: `call ${id}` }] } });
    // And a lone line after them is not held back.
    await callTool(transport, 500, 'echo', { text: 'alone' });
    expect(await sink.response(500)).toMatchObject({ result: { content: [{ text: 'alone' }] } });
  });

  it('a message JSON cannot encode is a ProtocolError naming the method; nothing is written', async () => {
    const { transport, sink } = await start([]);
    await initialize(transport, sink);
    const error = await transport
      .send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { n: 1n } } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/cannot send 'tools\/call': its params cannot be encoded as JSON/);
    await callTool(transport, 8, 'echo', { text: 'next' });
    expect(await sink.response(8)).toMatchObject({ result: { content: [{ text: 'next' }] } });
    expect(sink.messages.some((m) => 'id' in m && m.id === 7)).toBe(false);
  });
});

describe('stdio transport: stderr', () => {
  it('keeps a bounded tail of stderr lines and forwards every line', async () => {
    const forwarded: string[] = [];
    const { transport, sink } = await start(['--stderr-lines', '120'], {
      stderr: { tailLines: 5, forward: (line, server) => forwarded.push(`${server}:${line}`) },
    });
    await initialize(transport, sink); // the lines are written before the fixture reads stdin
    await transport.close();
    expect(transport.stderrTail()).toEqual([
      'stderr line 117',
      'stderr line 118',
      'stderr line 119',
      'stderr line 120',
      'fixture: stdin closed',
    ]);
    expect(forwarded).toHaveLength(121);
    expect(forwarded[0]).toBe('fx:stderr line 1');
  });

  it('starts the child with the safe environment plus the configured env, not the whole parent environment', async () => {
    process.env.MCP_SUPERVISOR_TEST_SECRET = 'do-not-leak';
    try {
      const sink = new RecordingSink();
      const transport = fixtureTransport(sink, [], {
        args: ['-e', 'process.stderr.write(JSON.stringify(process.env) + "\\n")'],
        env: { EXTRA: 'yes', PATH: '/custom/bin' },
      });
      opened.push(transport);
      await transport.open();
      await sink.closedError();
      const env = JSON.parse(transport.stderrTail()[0]!) as Record<string, string>;
      expect(env.EXTRA).toBe('yes');
      expect(env.PATH).toBe('/custom/bin');
      expect(env.MCP_SUPERVISOR_TEST_SECRET).toBeUndefined();
      if (process.env.HOME) expect(env.HOME).toBe(process.env.HOME);
    } finally {
      delete process.env.MCP_SUPERVISOR_TEST_SECRET;
    }
  });
});

describe('stdio transport: the process going away', () => {
  it('a command that does not exist rejects open() with a fatal SpawnError naming the command and the cwd', async () => {
    const sink = new RecordingSink();
    const transport = fixtureTransport(sink, [], { command: 'mcp-supervisor-no-such-command', cwd: '/' });
    const error = (await transport.open().catch((e: unknown) => e)) as SpawnError;
    expect(error).toBeInstanceOf(SpawnError);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error.fatal).toBe(true);
    expect(error.errno).toBe('ENOENT');
    expect(error.message).toContain("'mcp-supervisor-no-such-command'");
    expect(error.message).toContain(' in /');
    expect(transport.isOpen).toBe(false);
    expect(sink.closed).toEqual([]);
    await transport.close();
  });

  it('a cwd that does not exist is a SpawnError too; after a successful handshake it is not fatal', async () => {
    const transport = fixtureTransport(new RecordingSink(), [], {
      cwd: '/no/such/dir',
      hasConnectedBefore: () => true,
    });
    const error = (await transport.open().catch((e: unknown) => e)) as SpawnError;
    expect(error).toBeInstanceOf(SpawnError);
    expect(error.message).toContain('/no/such/dir');
    expect(error.fatal).toBe(false);
    expect(error.retryable).toBe(true);
  });

  it('a process that exits before its first handshake is reported once, fatal, with the exit code and stderr', async () => {
    const { transport, sink } = await start(['--exit-at-once', '7']);
    const error = (await sink.closedError()) as ConnectionClosedError;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error.fatal).toBe(true);
    expect(error.message).toMatch(
      /exited with code 7 before completing its first MCP handshake; stderr: fixture: refusing to start/,
    );
    expect(transport.isOpen).toBe(false);
    expect(transport.pid).toBeUndefined();
    expect(transport.exitStatus).toEqual({ code: 7, signal: null });
    const sendError = (await callTool(transport, 9, 'echo').catch((e: unknown) => e)) as ConnectionClosedError;
    expect(sendError).toBeInstanceOf(ConnectionClosedError);
    expect(sendError.message).toMatch(/cannot send: .*exited with code 7/);
    // Nothing was written: recovery reads it as a request that never left (it waits, never fails for it).
    expect(sendError.unsent).toBe(true);
    expect(readEvidence(sendError)).toEqual({ kind: 'unreachable', reason: 'not running' });
    expect(sink.closed).toHaveLength(1);
  });

  it('a crash after the handshake is reported as restartable, with the exit code and the stderr tail', async () => {
    const { transport, sink } = await start(['--crash-after', '1', '--stderr-lines', '2'], {
      hasConnectedBefore: () => true,
    });
    await initialize(transport, sink);
    await callTool(transport, 2, 'echo', { text: 'one' });
    await sink.response(2);
    await callTool(transport, 3, 'echo', { text: 'two' });
    const error = (await sink.closedError()) as ConnectionClosedError;
    expect(error.fatal).toBe(false);
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(
      /exited with code 3; stderr: stderr line 1 \| stderr line 2 \| fixture: crashing after 1 requests/,
    );
    expect(sink.messages.some((m) => 'id' in m && m.id === 3)).toBe(false);
  });

  it('stdout EOF with the process still running: reported, and the process is stopped', async () => {
    const { transport, sink } = await start([], {
      args: ['-e', 'process.stdout.end(); process.stderr.write("closed stdout\\n"); setInterval(() => {}, 1000)'],
      shutdown: { closeStdinTimeoutMs: 50, sigtermTimeoutMs: 2_000 },
    });
    const pid = transport.pid!;
    const error = await sink.closedError();
    expect(error.message).toMatch(/closed its stdout|exited with signal SIGTERM/);
    await transport.close();
    expect(transport.exitStatus).toEqual({ code: null, signal: 'SIGTERM' });
    expect(isRunning(pid)).toBe(false);
  });
});

describe('stdio transport: shutdown (close stdin → SIGTERM → SIGKILL)', () => {
  it('a well-behaved server exits when stdin closes: no signal is sent', async () => {
    const { transport, sink } = await start([]);
    await initialize(transport, sink);
    const pid = transport.pid!;
    await transport.close();
    expect(transport.exitStatus).toEqual({ code: 0, signal: null });
    expect(transport.stderrTail()).toEqual(['fixture: stdin closed']);
    expect(sink.closed).toEqual([]); // a requested close is not a loss
    expect(isRunning(pid)).toBe(false);
    expect(transport.isOpen).toBe(false);
  });

  it('a server that ignores stdin EOF gets SIGTERM after closeStdinTimeoutMs', async () => {
    const { transport, sink } = await start(['--linger'], {
      shutdown: { closeStdinTimeoutMs: 100, sigtermTimeoutMs: 5_000 },
    });
    await initialize(transport, sink);
    const started = performance.now();
    await transport.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(transport.exitStatus).toEqual({ code: null, signal: 'SIGTERM' });
    expect(transport.stderrTail()).toEqual(['fixture: stdin closed']);
  });

  it('a server that ignores SIGTERM gets SIGKILL after sigtermTimeoutMs more', async () => {
    const { transport, sink } = await start(['--linger', '--ignore-sigterm'], {
      shutdown: { closeStdinTimeoutMs: 100, sigtermTimeoutMs: 150 },
    });
    await initialize(transport, sink);
    const pid = transport.pid!;
    const started = performance.now();
    await transport.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(245);
    expect(transport.exitStatus).toEqual({ code: null, signal: 'SIGKILL' });
    // The order is visible in what the server saw: stdin closed, then SIGTERM.
    expect(transport.stderrTail()).toEqual(['fixture: stdin closed', 'fixture: ignoring SIGTERM']);
    expect(isRunning(pid)).toBe(false);
  });

  it('signals the whole process group: a grandchild does not survive close()', async () => {
    const { transport, sink } = await start(['--grandchild'], {
      shutdown: { closeStdinTimeoutMs: 100, sigtermTimeoutMs: 1_000 },
    });
    await initialize(transport, sink);
    const pid = transport.pid!;
    const grandchild = grandchildPid(transport.stderrTail())!;
    expect(isRunning(grandchild)).toBe(true);
    await transport.close();
    expect(isRunning(pid)).toBe(false);
    expect(isRunning(grandchild)).toBe(false);
  });

  it('reaps the grandchildren of a server that crashed on its own', async () => {
    const { transport, sink } = await start(['--grandchild', '--crash-after', '0'], { hasConnectedBefore: () => true });
    await initialize(transport, sink);
    const grandchild = grandchildPid(transport.stderrTail())!;
    await callTool(transport, 2, 'echo');
    const error = await sink.closedError();
    expect(error.message).toMatch(/exited with code 3/);
    await transport.close(); // resolves once the group is gone
    expect(isRunning(grandchild)).toBe(false);
  });

  it('close() during open() stops the process once it exists', async () => {
    const sink = new RecordingSink();
    const transport = fixtureTransport(sink, newTag());
    const opening = transport.open();
    const closing = transport.close();
    await opening;
    expect(transport.isOpen).toBe(false);
    await closing;
    expect(transport.exitStatus).toEqual({ code: 0, signal: null });
    expect(sink.closed).toEqual([]);
  });

  it('close() is idempotent and safe before open()', async () => {
    const idle = fixtureTransport(new RecordingSink(), []);
    await idle.close();
    const { transport } = await start([]);
    await Promise.all([transport.close(), transport.close()]);
    expect(transport.exitStatus?.code).toBe(0);
  });
});

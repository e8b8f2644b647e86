/**
 * Helpers for the stdio tests: the fixture script, a recording sink that can be awaited (never
 * the clock), and process checks that tell a live process from a zombie waiting for its reaper.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonRpcMessage } from '../../../src/protocol/jsonrpc.js';
import { readStat } from '../../../src/transports/stdio/process-tree.js';
import { StdioTransport, type StdioTransportOptions } from '../../../src/transports/stdio/stdio.js';
import type { TransportSink } from '../../../src/transports/transport.js';

export const FIXTURE = fileURLToPath(new URL('../../../servers/stdio-server.mjs', import.meta.url));

/** A unique argument that marks the processes of one test (the fixture ignores `--tag`). */
export function newTag(): string[] {
  return ['--tag', `stdio-test-${randomUUID()}`];
}

/** True while `pid` runs; a zombie (exited, not yet reaped by init) does not count. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  const stat = process.platform === 'linux' ? readStat(pid) : undefined;
  return stat === undefined ? process.platform !== 'linux' : stat.state !== 'Z' && stat.state !== 'X';
}

/** Live processes whose command line contains `tag` (Linux /proc). */
export function processesTagged(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes(tag) && isRunning(Number(entry))) found.push(Number(entry));
  }
  return found;
}

/** The pid the fixture printed for its grandchild ("grandchild pid N" on stderr). */
export function grandchildPid(stderrTail: readonly string[]): number | undefined {
  for (const line of stderrTail) {
    const match = /^grandchild pid (\d+)$/.exec(line);
    if (match) return Number(match[1]);
  }
  return undefined;
}

type Waiter<T> = { match: (value: T) => boolean; resolve: (value: T) => void };

/** Records what a transport reports; `next*` resolve on the next (or an already recorded) matching report. */
export class RecordingSink implements TransportSink {
  readonly messages: JsonRpcMessage[] = [];
  readonly streamErrors: Error[] = [];
  readonly closed: Error[] = [];
  private readonly waiters: {
    message: Waiter<JsonRpcMessage>[];
    streamError: Waiter<Error>[];
    closed: Waiter<Error>[];
  } = { message: [], streamError: [], closed: [] };

  onMessage(message: JsonRpcMessage): void {
    this.messages.push(message);
    this.notify('message', message);
  }

  isAwaiting(): boolean {
    return true;
  }

  onStreamError(error: Error): void {
    this.streamErrors.push(error);
    this.notify('streamError', error);
  }

  onClosed(error: Error): void {
    this.closed.push(error);
    this.notify('closed', error);
  }

  response(id: number): Promise<JsonRpcMessage> {
    return this.wait('message', this.messages, (m) => 'id' in m && m.id === id && !('method' in m));
  }

  streamError(match: (error: Error) => boolean = () => true): Promise<Error> {
    return this.wait('streamError', this.streamErrors, match);
  }

  closedError(): Promise<Error> {
    return this.wait('closed', this.closed, () => true);
  }

  private wait<K extends keyof RecordingSink['waiters'], T extends JsonRpcMessage | Error>(
    kind: K,
    seen: T[],
    match: (value: T) => boolean,
  ): Promise<T> {
    const already = seen.find(match);
    if (already) return Promise.resolve(already);
    return new Promise<T>((resolve) => (this.waiters[kind] as unknown as Waiter<T>[]).push({ match, resolve }));
  }

  private notify<K extends keyof RecordingSink['waiters']>(kind: K, value: JsonRpcMessage | Error): void {
    const list = this.waiters[kind] as Waiter<JsonRpcMessage | Error>[];
    for (const waiter of [...list]) {
      if (!waiter.match(value)) continue;
      list.splice(list.indexOf(waiter), 1);
      waiter.resolve(value);
    }
  }
}

export type TransportOverrides = Partial<Omit<StdioTransportOptions, 'sink'>>;

/** A transport for the fixture with `args`; short shutdown delays unless overridden. */
export function fixtureTransport(
  sink: RecordingSink,
  args: string[],
  overrides: TransportOverrides = {},
): StdioTransport {
  return new StdioTransport({
    server: 'fx',
    command: process.execPath,
    args: [FIXTURE, ...args],
    env: {},
    cwd: undefined,
    maxMessageBytes: 1024 * 1024,
    shutdown: { closeStdinTimeoutMs: 2_000, sigtermTimeoutMs: 2_000 },
    stderr: { tailLines: 50, forward: false },
    sink,
    hasConnectedBefore: () => false,
    ...overrides,
  });
}

/** initialize as the runtime sends it; resolves with the response. */
export async function initialize(transport: StdioTransport, sink: RecordingSink, id = 1): Promise<JsonRpcMessage> {
  await transport.send({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  return sink.response(id);
}

/** tools/call as a JSON-RPC request; resolves once written. */
export function callTool(
  transport: StdioTransport,
  id: number,
  name: string,
  args: Record<string, unknown> = {},
): Promise<void> {
  return transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

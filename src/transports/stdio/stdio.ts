/**
 * stdio transport (MCP §stdio): the server is a child process; one JSON-RPC message per line on
 * its stdin and stdout; stderr is diagnostics. One transport runs one process: when the process
 * dies the transport reports it (`sink.onClosed`) and the runtime builds a new one to restart.
 * Starting and stopping the process (the spec's shutdown sequence) is server-process.ts.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import type { Writable } from 'node:stream';
import type { StderrForward, StdioShutdownConfig } from '../../config/server-config.js';
import { ConnectionClosedError, ProtocolError, type SpawnError } from '../../core/errors.js';
import { excerpt } from '../../core/excerpt.js';
import { encodeMessage, parseMessages, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import { LineReader } from './line-reader.js';
import { trackTree } from './process-tree.js';
import {
  describeExit,
  endServerProcess,
  reapProcessGroup,
  spawnError,
  spawnServerProcess,
  type ExitStatus,
  type ServerCommand,
  type ServerProcess,
} from './server-process.js';
import { StderrTail } from './stderr-tail.js';
import type { Transport, TransportSink } from '../transport.js';

export interface StdioTransportOptions extends ServerCommand {
  /** Longest stdout line accepted; longer ones are reported and skipped. */
  maxMessageBytes: number;
  shutdown: StdioShutdownConfig;
  stderr: { tailLines: number; forward: StderrForward };
  sink: TransportSink;
  /**
   * Whether this server has completed a handshake before (with an earlier process). Until it
   * has, a command that cannot start or dies before its first handshake is a fatal error:
   * restarting it cannot help.
   */
  hasConnectedBefore?: () => boolean;
}

/** After the process exited (or closed stdout), how long to wait for the other half before reporting. */
const LOSS_GRACE_MS = 100;
/** Stderr lines quoted in the error when the process dies, and their total length. */
const ERROR_TAIL_LINES = 10;
const ERROR_TAIL_CHARS = 2_000;

export class StdioTransport implements Transport {
  readonly kind = 'stdio' as const;
  readonly server: string;
  private readonly options: StdioTransportOptions;
  private readonly sink: TransportSink;
  private readonly reader: LineReader;
  private readonly tail: StderrTail;
  private child: ServerProcess | undefined;
  private running = false;
  private spawned = false;
  private exit: ExitStatus | undefined;
  private stdoutEnded = false;
  private stderrEnded = false;
  private resolveExited!: () => void;
  private readonly exited = new Promise<void>((resolve) => {
    this.resolveExited = resolve;
  });
  private closeRequested = false;
  private reported = false;
  private lossTimer: NodeJS.Timeout | undefined;
  private lost: { message: string; fatal: boolean } | undefined;
  /** Lines the process never got (its pipe was closed): rejected as unsent before the loss is reported. */
  private unsent: Array<() => void> | undefined;
  private stopping: Promise<void> | undefined;
  private reaping: Promise<void> | undefined;
  private generation = 0;
  /** Lines sent in this tick (see send): from the second on, stdin is corked until the tick ends. */
  linesThisTick = 0;
  /** Settles when open() has (spawned or failed). */
  private started: Promise<void> = Promise.resolve();

  constructor(options: StdioTransportOptions) {
    this.options = options;
    this.server = options.server;
    this.sink = options.sink;
    this.reader = new LineReader(options.maxMessageBytes, {
      onLine: (line) => this.onLine(line),
      onOversize: (bytes) =>
        this.sink.onStreamError(
          new ProtocolError(
            `skipped a stdout line longer than maxMessageBytes (${options.maxMessageBytes} bytes; ${bytes} bytes seen so far)`,
            { server: this.server },
          ),
        ),
    });
    this.tail = new StderrTail(options.stderr.tailLines, stderrForwarder(options.stderr.forward, options.server));
  }

  get isOpen(): boolean {
    return this.running;
  }

  /** The child's pid while it runs. */
  get pid(): number | undefined {
    return this.spawned && this.exit === undefined ? this.child?.pid : undefined;
  }

  /** How the child ended, once it has. */
  get exitStatus(): ExitStatus | undefined {
    return this.exit;
  }

  /** The most recent stderr lines, oldest first. */
  stderrTail(): string[] {
    return this.tail.recent();
  }

  get sessionGeneration(): number {
    return this.generation;
  }

  /** stdio has no session id: the process is the session. */
  get hasSession(): boolean {
    return false;
  }

  /** Modern requests carry their version in `_meta`; nothing on this transport changes but the generation. */
  beginModern(): void {
    this.generation++;
  }

  beginSession(): void {
    this.generation++;
  }

  completeSession(): void {}

  /** Spawns the process; resolves once it runs, rejects with a SpawnError when it cannot start. */
  async open(): Promise<void> {
    if (this.child) throw new Error('a stdio transport runs one process; build a new transport to restart');
    const { command } = this.options;
    let child: ServerProcess;
    try {
      child = spawnServerProcess(this.options);
    } catch (error) {
      throw this.cannotStart(error);
    }
    this.child = child;
    child.stdin.on('error', () => {}); // EPIPE once the process is gone; send() reports it
    child.stdout.on('data', (chunk: Buffer) => this.reader.push(chunk));
    child.stdout.on('end', () => this.onStdoutEnd());
    child.stdout.on('error', () => {});
    child.stderr.on('data', (chunk: Buffer) => this.tail.push(chunk));
    child.stderr.on('end', () => this.onStderrEnd());
    child.stderr.on('error', () => {});
    child.on('exit', (code, signal) => this.onExit(code, signal));
    const started = new Promise<void>((resolve, reject) => {
      child.on('error', (error) => {
        if (!this.spawned) reject(this.cannotStart(error));
        else
          this.sink.onStreamError(
            new ConnectionClosedError(`the server process (${command}) reported an error: ${error.message}`, {
              server: this.server,
              retryable: true,
              cause: error,
            }),
          );
      });
      child.once('spawn', () => {
        this.spawned = true;
        this.running = !this.closeRequested;
        if (child.pid !== undefined) trackTree(child.pid);
        resolve();
      });
    });
    this.started = started.catch(() => {});
    await started;
  }

  /** Writes one line; resolves once it was handed to the pipe. Responses arrive through the sink. */
  send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!this.running || !stdin?.writable) {
      // stdin can close a moment before the exit is known: wait (bounded) so the error says why.
      if (this.running && !this.closeRequested) return this.refuseUnsent(undefined);
      return Promise.reject(this.notRunningError(undefined, true));
    }
    // JSON.stringify never emits a raw newline, so the message is exactly one line.
    const encoded = encodeMessage(message, this.server);
    if (typeof encoded !== 'string') return Promise.reject(encoded);
    const line = `${encoded}\n`;
    // The first line of a tick is written at once; the lines after it in the same tick are
    // corked and leave together at the end of the tick (one writev): 64 calls in flight cost a
    // few system calls instead of 64, and a lone call waits for nothing.
    if (this.linesThisTick++ === 0) process.nextTick(endTick, this, stdin);
    else if (this.linesThisTick === 2) stdin.cork();
    return new Promise<void>((resolve, reject) => {
      stdin.write(line, (error) => {
        if (!error) return resolve();
        // EPIPE: the process is gone, and the line never reached it: unsent, so it waits for the
        // restart instead of being taken for a call the server may have run.
        this.refuseUnsent(error).catch(reject);
      });
    });
  }

  /** There is no GET stream: server-to-client messages arrive on stdout with everything else. */
  async openListener(): Promise<ListenerOpening> {
    return { kind: 'unavailable', status: 0 };
  }

  async terminateSession(): Promise<void> {}

  /** Stops the process (stdin → SIGTERM → SIGKILL) and anything left in its group; bounded. */
  close(): Promise<void> {
    this.closeRequested = true;
    clearTimeout(this.lossTimer);
    return this.shutdown();
  }

  // ---- incoming

  private onLine(line: string): void {
    let messages: JsonRpcMessage[];
    try {
      messages = parseMessages(line, this.server);
    } catch (error) {
      this.sink.onStreamError(
        new ProtocolError(`skipped a stdout line that is not a JSON-RPC message: ${excerpt(line)}`, {
          server: this.server,
          cause: error,
        }),
      );
      return;
    }
    for (const message of messages) this.sink.onMessage(message);
  }

  // ---- the process going away on its own

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.spawned || this.exit) return;
    this.exit = { code, signal };
    this.running = false;
    this.resolveExited();
    if (this.closeRequested) return;
    this.settleLoss();
    void this.reap();
  }

  private onStdoutEnd(): void {
    this.reader.end();
    this.stdoutEnded = true;
    if (!this.spawned || this.closeRequested) return;
    this.running = false;
    this.settleLoss();
    // The server can no longer answer: stop it (it may be exiting already).
    if (!this.exit) void this.shutdown();
  }

  private onStderrEnd(): void {
    this.tail.end();
    this.stderrEnded = true;
    if (this.exit || this.stdoutEnded) this.settleLoss();
  }

  /**
   * Reports once the exit, stdout EOF and stderr EOF were all seen (so the last response and the
   * last stderr lines are in), or shortly after the first of them (a grandchild may hold the pipes).
   */
  private settleLoss(): void {
    if (this.reported || this.closeRequested) return;
    if (this.exit && this.stdoutEnded && this.stderrEnded) {
      this.report();
      return;
    }
    this.lossTimer ??= setTimeout(() => this.report(), LOSS_GRACE_MS);
  }

  private report(): void {
    if (this.reported || this.closeRequested) return;
    this.reported = true;
    clearTimeout(this.lossTimer);
    this.lost = this.describeLoss();
    const { message, fatal } = this.lost;
    const loss = new ConnectionClosedError(message, { retryable: !fatal, fatal });
    // Lines that never reached the process are refused first, and their refusals read (a macrotask
    // later), so the loss does not take them for requests on the wire.
    if (!this.refuseAllUnsent()) this.sink.onClosed(loss);
    else setImmediate(() => this.sink.onClosed(loss));
  }

  /**
   * A line the process cannot get: refused as unsent once its exit is known (so the error says
   * why), and before the loss is reported; at once when it already was.
   */
  private refuseUnsent(cause: Error | undefined): Promise<void> {
    if (this.reported || this.closeRequested) return Promise.reject(this.notRunningError(cause, true));
    return new Promise<void>((_, reject) => {
      (this.unsent ??= []).push(() => reject(this.notRunningError(cause, true)));
      void this.waitExit(LOSS_GRACE_MS).then(() => this.refuseAllUnsent());
    });
  }

  /** Refuses the lines waiting for the loss; true when there were any. */
  private refuseAllUnsent(): boolean {
    const unsent = this.unsent;
    this.unsent = undefined;
    for (const refuse of unsent ?? []) refuse();
    return unsent !== undefined;
  }

  private describeLoss(): { message: string; fatal: boolean } {
    const fatal = !(this.options.hasConnectedBefore?.() ?? false);
    const what = this.exit ? `exited with ${describeExit(this.exit)}` : 'closed its stdout';
    const when = fatal ? ' before completing its first MCP handshake' : '';
    return {
      message: `the server process (${this.options.command}, pid ${this.child?.pid ?? '?'}) ${what}${when}${this.stderrSuffix()}`,
      fatal,
    };
  }

  private stderrSuffix(): string {
    const lines = this.tail.recent().slice(-ERROR_TAIL_LINES);
    if (lines.length === 0) return '; no stderr output';
    let text = lines.join(' | ');
    if (text.length > ERROR_TAIL_CHARS) text = `…${text.slice(-ERROR_TAIL_CHARS)}`;
    return `; stderr: ${text}`;
  }

  // ---- stopping

  private shutdown(): Promise<void> {
    this.stopping ??= this.stopSequence();
    return this.stopping;
  }

  private async stopSequence(): Promise<void> {
    await this.started; // a close() during open() stops the process once it exists
    this.running = false;
    const child = this.child;
    if (!child || !this.spawned) return;
    if (!this.exit) await endServerProcess(child, this.options.shutdown, (ms) => this.waitExit(ms));
    await this.reap();
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
  }

  /** The direct child is gone: the rest of its group goes too. */
  private reap(): Promise<void> {
    this.reaping ??= reapProcessGroup(this.child?.pid, this.options.shutdown.sigtermTimeoutMs);
    return this.reaping;
  }

  /** True once the child exited, false when `ms` passed first. */
  private async waitExit(ms: number): Promise<boolean> {
    if (this.exit) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([this.exited.then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- errors

  private cannotStart(error: unknown): SpawnError {
    return spawnError(error, this.options, !(this.options.hasConnectedBefore?.() ?? false));
  }

  /** `unsent`: nothing of the message was written (it may be sent again once the process is back). */
  private notRunningError(cause?: Error, unsent = false): ConnectionClosedError {
    // Gone on its own but not reported yet (the grace period): the error already says why.
    const lost =
      this.lost ?? (!this.closeRequested && (this.exit || this.stdoutEnded) ? this.describeLoss() : undefined);
    if (lost)
      return new ConnectionClosedError(`cannot send: ${lost.message}`, {
        server: this.server,
        retryable: !lost.fatal,
        fatal: lost.fatal,
        unsent,
        cause,
      });
    return new ConnectionClosedError(`cannot send: the server process (${this.options.command}) is not running`, {
      server: this.server,
      retryable: true,
      unsent,
      cause,
    });
  }
}

function endTick(transport: StdioTransport, stdin: Writable): void {
  if (transport.linesThisTick > 1) stdin.uncork();
  transport.linesThisTick = 0;
}

function stderrForwarder(forward: StderrForward, server: string): ((line: string) => void) | undefined {
  if (forward === false) return undefined;
  if (forward === 'inherit') return (line) => process.stderr.write(`[${server}] ${line}\n`);
  return (line) => forward(line, server);
}

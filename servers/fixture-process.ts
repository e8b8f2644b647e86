/**
 * Test servers in a child process of their own, for faults only a process can have:
 *
 * - `startFixtureProcess`: the HTTP fixture (http-fixture.ts), frozen with SIGSTOP (sockets open,
 *   port bound, nothing answered: a hung VM, a process stuck in GC or a debugger) and resumed
 *   with SIGCONT where it stopped. Keepalive and request-timeout tests under load use it.
 * - `startSdkExampleProcess`: the SDK-example server (sdk-example-server.ts), killed with SIGKILL
 *   and started again on the same port, as a crashed and restarted deployment is. Its counts
 *   of executions and requests reach the parent as they happen (IPC), so they survive the kill.
 *
 *   const server = await startFixtureProcess({ responseMode: 'json' });
 *   server.freeze(); …; server.thaw(); await server.close();
 *
 * Run as a script (`node --import tsx servers/fixture-process.ts <kind> '<options JSON>'`) it is
 * the child: starts the server and reports its URL (stdout for the fixture, IPC for the other).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startHttpFixture, type FixtureOptions } from './http-fixture.js';
import { startSdkExampleServer, type SdkExampleOptions } from './sdk-example-server.js';

export interface FixtureProcess {
  url: string;
  pid: number;
  /** SIGSTOP: the process stops answering; its sockets stay open. */
  freeze(): void;
  /** SIGCONT: it answers again, including what arrived while it was frozen. */
  thaw(): void;
  /** Thaws it if frozen and kills it; resolves once it exited. */
  close(): Promise<void>;
}

export interface SdkExampleProcess {
  url: string;
  port: number;
  /** The running process's pid (undefined while killed). */
  pid(): number | undefined;
  /** Tool executions by tool, over every process that ran on this port (after a round trip, so none is in transit). */
  executions(): Promise<Record<string, number>>;
  /** Requests by JSON-RPC method, over every process that ran on this port. */
  requests(): Promise<Record<string, number>>;
  /** SIGKILL: sockets reset, connections refused until `start()`. Resolves once it exited. */
  kill(): Promise<void>;
  /** A new process on the same port (with these options changed, for this life and the next ones). */
  start(changes?: Partial<SdkOptions>): Promise<void>;
  close(): Promise<void>;
}

type ServerKind = 'http-fixture' | 'sdk-example';
type ChildMessage =
  | { type: 'listening'; url: string }
  | { type: 'count'; kind: 'execution' | 'request'; key: string }
  | { type: 'synced'; id: number };

const SELF = fileURLToPath(import.meta.url);

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (alive(child) ? child.once('exit', () => resolve()) : resolve()));
}

export async function startFixtureProcess(options: FixtureOptions = {}): Promise<FixtureProcess> {
  const kind: ServerKind = 'http-fixture';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF, kind, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fixture process exited with ${code}`)));
  });
  const exited = exitOf(child);
  const signal = (name: NodeJS.Signals) => {
    if (alive(child)) child.kill(name);
  };
  return {
    url,
    pid: child.pid!,
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    async close() {
      signal('SIGCONT');
      signal('SIGKILL');
      await exited;
    },
  };
}

type SdkOptions = Omit<SdkExampleOptions, 'onCount'>;

export async function startSdkExampleProcess(initial: SdkOptions = {}): Promise<SdkExampleProcess> {
  let options = initial;
  const counts = { execution: {} as Record<string, number>, request: {} as Record<string, number> };
  let port = options.port ?? 0;
  let child: ChildProcess | undefined;
  let syncs = 0;
  const waitingSyncs = new Map<number, () => void>();

  /** IPC keeps order: once the child answers, every count it sent before is in. */
  function sync(): Promise<void> {
    const running = child;
    if (!running || !alive(running) || !running.connected) return Promise.resolve();
    const id = ++syncs;
    return new Promise((resolve) => {
      waitingSyncs.set(id, resolve);
      running.once('exit', () => resolve());
      running.send({ type: 'sync', id });
    });
  }

  async function start(changes: Partial<SdkOptions> = {}): Promise<void> {
    if (child && alive(child)) return;
    options = { ...options, ...changes };
    const kind: ServerKind = 'sdk-example';
    const started = fork(SELF, [kind, JSON.stringify({ ...options, port })], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child = started;
    started.on('message', (message: ChildMessage) => {
      if (message.type === 'synced') {
        waitingSyncs.get(message.id)?.();
        waitingSyncs.delete(message.id);
      }
      if (message.type !== 'count') return;
      const map = counts[message.kind];
      map[message.key] = (map[message.key] ?? 0) + 1;
    });
    const url = await new Promise<string>((resolve, reject) => {
      started.on('message', (message: ChildMessage) => {
        if (message.type === 'listening') resolve(message.url);
      });
      started.once('exit', (code) => reject(new Error(`the SDK-example process exited with ${code}`)));
    });
    port = Number(new URL(url).port);
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running) return;
    await sync(); // counts already sent arrive; whatever runs after this is lost, as in a real kill
    const exited = exitOf(running);
    if (alive(running)) running.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    get port() {
      return port;
    },
    pid: () => child?.pid,
    executions: () => sync().then(() => ({ ...counts.execution })),
    requests: () => sync().then(() => ({ ...counts.request })),
    kill,
    start: (changes) => start(changes),
    close: kill,
  };
}

async function runChild(kind: ServerKind, optionsJson: string): Promise<void> {
  if (kind === 'http-fixture') {
    const fixture = await startHttpFixture(JSON.parse(optionsJson) as FixtureOptions);
    process.stdout.write(`${JSON.stringify({ url: fixture.url })}\n`);
    return;
  }
  const send = (message: ChildMessage) => process.send?.(message);
  const server = await startSdkExampleServer({
    ...(JSON.parse(optionsJson) as SdkExampleOptions),
    onCount: (countKind, key) => send({ type: 'count', kind: countKind, key }),
  });
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message.type === 'sync') send({ type: 'synced', id: message.id ?? 0 });
  });
  process.on('disconnect', () => process.exit(0)); // the parent is gone: leave no orphan
  send({ type: 'listening', url: server.url });
}

if (process.argv[1] === SELF) await runChild(process.argv[2] as ServerKind, process.argv[3] ?? '{}');

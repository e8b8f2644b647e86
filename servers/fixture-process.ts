/**
 * The HTTP fixture (http-fixture.ts) in a child process of its own, so a test can freeze it:
 * SIGSTOP leaves its sockets open and its port bound but answers nothing (a hung VM, a process
 * stuck in GC or a debugger), SIGCONT resumes it where it stopped. Keepalive and request-timeout
 * tests under load use it (issue #21 item 2).
 *
 *   const server = await startFixtureProcess({ responseMode: 'json' });
 *   server.freeze(); …; server.thaw(); await server.close();
 *
 * Run as a script (`node --import tsx servers/fixture-process.ts '<options JSON>'`) it is the
 * child: starts the fixture and prints `{"url":…}`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startHttpFixture, type FixtureOptions } from './http-fixture.js';

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

const SELF = fileURLToPath(import.meta.url);

export async function startFixtureProcess(options: FixtureOptions = {}): Promise<FixtureProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fixture process exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
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

if (process.argv[1] === SELF) {
  const fixture = await startHttpFixture(JSON.parse(process.argv[2] ?? '{}') as FixtureOptions);
  process.stdout.write(`${JSON.stringify({ url: fixture.url })}\n`);
}

/**
 * A real redis-server (Debian's package; `.ci/run` installs it) on a free loopback port, for the
 * Redis store's tests and the soak tests: started, stopped (SIGKILL), restarted on the same port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops it (SIGKILL: no goodbye to the clients) and starts it again on the same port. */
  restart(options?: { downMs?: number }): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const REDIS_SERVER = process.env['REDIS_SERVER'] ?? '/usr/bin/redis-server';

export interface RedisServerOptions {
  /**
   * Keep the data across restarts in an append-only file fsynced on every write (what a fleet's
   * Redis should do: a restart then loses nothing). Default: no persistence, a restart comes back empty.
   */
  persistIn?: string | undefined;
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const persistence = options.persistIn
    ? ['--dir', options.persistIn, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--save', '', '--appendonly', 'no'];
  let child: ChildProcess | undefined;

  const start = async () => {
    const started = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', ...persistence], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`redis-server did not start: ${output}`)), 10_000);
      const seen = (chunk: Buffer) => {
        output += chunk.toString();
        if (/ready to accept connections/i.test(output)) {
          clearTimeout(timer);
          ready();
        }
      };
      started.stdout.on('data', seen);
      started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.on('error', (error) => {
        clearTimeout(timer);
        fail(error);
      });
      started.on('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`redis-server exited (${code}): ${output}`));
      });
    });
  };

  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((done) => running.once('exit', done));
    running.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async restart({ downMs = 0 } = {}) {
      await stop();
      if (downMs > 0) await new Promise((wait) => setTimeout(wait, downMs));
      await start();
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

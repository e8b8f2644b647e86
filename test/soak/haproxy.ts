/**
 * A real load balancer from Debian (`haproxy`; `.ci/run` installs it) on a loopback port, in front
 * of gateway replicas: round robin per request, no stickiness, a health check on `/healthz`, and a
 * connection refused by a dead replica retried on another (`retries`, `option redispatch`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../cli/helpers.js';

const HAPROXY = process.env['HAPROXY'] ?? '/usr/sbin/haproxy';

export interface Haproxy {
  /** http://127.0.0.1:port/mcp */
  url: string;
  stop(): Promise<void>;
}

export async function startHaproxy(dir: string, backends: readonly number[]): Promise<Haproxy> {
  const port = await freePort();
  const config = join(dir, 'haproxy.cfg');
  writeFileSync(
    config,
    [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 120s',
      '  timeout server 120s',
      '  retries 3',
      '  option redispatch 1',
      'frontend gateway',
      `  bind 127.0.0.1:${port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk',
      '  http-check send meth GET uri /healthz hdr Host 127.0.0.1',
      ...backends.map((backend, i) => `  server r${i + 1} 127.0.0.1:${backend} check inter 250 fall 1 rise 1`),
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Listening once a plain request gets any answer through it.
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
    const answer = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { host: '127.0.0.1' } }).catch(
      () => undefined,
    );
    if (answer?.ok) break;
    if (tries > 100) throw new Error(`haproxy did not come up: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

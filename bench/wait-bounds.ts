/**
 * Every wait bounded (issue 42): how long each bound actually takes, on real servers.
 *
 * - busy-handshake: every POST answered 503 (no Retry-After), or 429 with `Retry-After: 3600`:
 *   ms until `connect({ requestTimeoutMs: 2000 })` settles, and with what;
 * - dead-stdio: a stdio server killed (a zombie, its exit not yet noticed) and a call written to
 *   it at once: ms until the call is answered by the restarted process, and how many times the
 *   server processes ran it (the call log), with `retry` default and `'always'`.
 *
 *   npx tsx bench/wait-bounds.ts [--rounds N]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, createSupervisor } from '../src/index.js';
import { startHttpFixture } from '../servers/http-fixture.js';

const STDIO_FIXTURE = fileURLToPath(new URL('../servers/stdio-server.mjs', import.meta.url));

async function busyHandshake(status: 429 | 503, retryAfter: string | undefined): Promise<string> {
  const fixture = await startHttpFixture();
  fixture.faults.busyFor = { what: 'POST', times: Infinity, status, retryAfter };
  const started = performance.now();
  try {
    await connect({ url: fixture.url, requestTimeoutMs: 2_000, keepalive: false }, { name: 'busy' });
    return 'connected (unexpected)';
  } catch (error) {
    return `${(performance.now() - started).toFixed(0)} ms, ${(error as Error).name}`;
  } finally {
    await fixture.close();
  }
}

/** Kills `pid` and waits, without yielding, until it is a zombie: its exit is not noticed yet. */
function killUnnoticed(pid: number): void {
  process.kill(pid, 'SIGKILL');
  while (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) {
    // spin: yielding would let the exit be noticed
  }
}

async function deadStdio(retry: 'safe' | 'always'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wait-bounds-'));
  const log = join(dir, 'calls.log');
  const sup = createSupervisor({
    servers: {
      fx: {
        command: process.execPath,
        args: [STDIO_FIXTURE, '--call-log', log],
        protocolVersion: 'legacy',
        restart: { backoff: { initialMs: 10, maxMs: 20, jitter: 0 } },
      },
    },
  });
  try {
    await sup.start();
    const handle = sup.server('fx');
    killUnnoticed(handle.status().pid!);
    const started = performance.now();
    const outcome = await handle.callTool('echo', { text: 'after' }, { timeoutMs: 10_000, retry }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    const runs = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(' after')).length;
    return `${outcome} in ${(performance.now() - started).toFixed(0)} ms, executed ${runs}×`;
  } finally {
    await sup.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 3;
const lines = ['| case | round | result |', '| --- | --- | --- |'];
for (let round = 1; round <= rounds; round++) {
  lines.push(`| busy-handshake 503 | ${round} | ${await busyHandshake(503, undefined)} |`);
  lines.push(`| busy-handshake 429 Retry-After 3600 | ${round} | ${await busyHandshake(429, '3600')} |`);
  lines.push(`| dead-stdio retry safe | ${round} | ${await deadStdio('safe')} |`);
  lines.push(`| dead-stdio retry always | ${round} | ${await deadStdio('always')} |`);
}
console.log(lines.join('\n'));

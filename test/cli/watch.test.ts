/** `watch` and `npm start` (`watch --demo`), spawned, read line by line, stopped with Ctrl-C. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { spawnCli, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let fixture: HttpFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

describe('mcp-supervisor watch', () => {
  it('prints one plain line per transition when stdout is not a terminal, and stops cleanly on SIGINT', async () => {
    fixture = await startHttpFixture();
    const dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-watch-'));
    const config = join(dir, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { docs: { url: fixture.url, keepalive: { intervalMs: 100, timeoutMs: 2_000, maxMissed: 3 } } },
      }),
    );
    try {
      const cli = spawnCli(['watch', '--config', config]);
      await cli.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} {2}docs {2}initializing -> ready {2}\(initialized\)$/);
      fixture.expireAllSessions();
      await cli.waitForLine(/docs {2}ready -> expired {2}\(session expired \(HTTP 404\)\)$/);
      await cli.waitForLine(/docs {2}reinitializing -> ready {2}\(initialized\)$/);
      cli.child.kill('SIGINT');
      expect(await cli.exited).toBe(0);
      expect(cli.lines[0]).toMatch(/following .*mcp\.json: changes are applied as saved$/);
      expect(cli.lines[1]).toMatch(/docs {2}\(start\) -> connecting {2}\(start\)$/);
      expect(cli.lines).toContainEqual(expect.stringMatching(/docs {2}ready -> closing/));
      expect(cli.lines.at(-1)).toMatch(/docs {2}closing -> closed/);
      expect(cli.stdout()).not.toMatch(ANSI);
      expect(cli.stderr()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--once prints the table after the first outcome and exits 0 when every server is ready', async () => {
    fixture = await startHttpFixture();
    const cli = spawnCli(['watch', '--once', '--url', fixture.url, '--name', 'docs']);
    expect(await cli.exited).toBe(0);
    expect(cli.lines[0]).toMatch(/^SERVER\s+STATE\s+TRANSPORT\s+ERA\s+SESSION\s+RESTARTS\s+RTT\s+LAST ERROR$/);
    expect(cli.lines[1]).toMatch(/^docs\s+ready\s+http\s+legacy\s+\d+ms\s+0\s+-$/);
    expect(cli.stdout()).not.toMatch(ANSI);
  });

  it('--once exits 1 with the last error when a server is down', async () => {
    const cli = spawnCli(['watch', '--once', '--url', 'http://127.0.0.1:9/mcp', '--name', 'down']);
    expect(await cli.exited).toBe(1);
    expect(cli.lines[1]).toMatch(/^down\s+(reconnecting|connecting|failed)\s+.*\S$/);
  });
});

describe('npm start (watch --demo)', () => {
  it('supervises the demo servers over every supported transport and ends by itself with --duration', async () => {
    const cli = spawnCli(['watch', '--demo', '--duration', '6000']);
    const servers = (await cli.waitForLine(/demo servers: /)).replace(/^.*demo servers: /, '').split(', ');
    expect(servers).toEqual(expect.arrayContaining(['sdk-http', 'fixture-http']));
    for (const server of servers) await cli.waitForLine(new RegExp(`  ${server}  \\w+ -> ready`));
    expect(await cli.exited).toBe(0);
    for (const server of servers)
      expect(cli.lines).toContainEqual(expect.stringMatching(new RegExp(`  ${server}  closing -> closed`)));
    expect(cli.stderr()).toBe('');
  });

  it('--chaos injects faults and the machines heal; Ctrl-C stops it cleanly', async () => {
    const cli = spawnCli(['watch', '--demo', '--chaos', '--chaos-every', '300']);
    await cli.waitForLine(/chaos: sdk-http forgot every session/);
    await cli.waitForLine(/sdk-http {2}reinitializing -> ready/);
    await cli.waitForLine(/chaos: fixture-http expired every session/, 20_000);
    await cli.waitForLine(/fixture-http {2}reinitializing -> ready/);
    const servers = (await cli.waitForLine(/demo servers: /)).replace(/^.*demo servers: /, '').split(', ');
    if (servers.includes('stdio')) {
      await cli.waitForLine(/chaos: killed the stdio server's process/);
      await cli.waitForLine(/stdio {2}reconnecting -> connecting/);
    }
    expect(servers).toContain('oauth-http');
    await cli.waitForLine(/oauth-http {2}(discovering|initializing) -> authorizing {2}\(authorization required/);
    await cli.waitForLine(/chaos: oauth-http expired every access token/, 20_000);
    await cli.waitForLine(/oauth-http {2}authorizing -> ready {2}\(authorized\)/);
    await cli.waitForLine(/chaos: sdk-example restarted/, 20_000);
    await cli.waitForLine(/sdk-example {2}reinitializing -> ready/);
    await cli.waitForLine(/workload on sdk-example: [1-9]\d* calls answered, 0 lost/, 20_000);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe('');
  }, 40_000);
});

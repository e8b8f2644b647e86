/** `watch --config` follows the file: real files, rewritten while the CLI runs. */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { spawnCli, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let one: HttpFixture;
let two: HttpFixture;
let dir: string;
beforeAll(async () => {
  [one, two] = await Promise.all([startHttpFixture(), startHttpFixture()]);
  dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-reload-'));
});
afterAll(async () => {
  await Promise.all([one.close(), two.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('watch --config follows the file', () => {
  it('starts added servers, stops removed ones, leaves unchanged ones, and ignores a broken file', async () => {
    const config = join(dir, 'mcp.json');
    const write = (servers: object) => writeFileSync(config, JSON.stringify({ mcpServers: servers }, null, 2));
    write({ a: { url: one.url } });
    const cli = spawnCli(['watch', '--config', config]);
    try {
      await cli.waitForLine(/ a {2}initializing -> ready/);

      write({ a: { url: one.url }, b: { url: two.url } });
      await cli.waitForLine(/config reloaded: added b \(1 unchanged\)$/);
      await cli.waitForLine(/ b {2}initializing -> ready/);

      writeFileSync(config, '{ "mcpServers": { "a": { "url": } } }');
      await cli.waitForLine(/config not applied, the servers run as before: .*mcp\.json: invalid JSON at line 1/);

      write({ a: { url: one.url }, b: { url: two.url }, c: { comand: 'node' } });
      await cli.waitForLine(
        /config not applied.*servers\.c: has neither `url`.*`comand` looks like a typo of `command`/,
      );

      // Saved the way many editors do: a new file renamed over the old one.
      writeFileSync(`${config}.tmp`, JSON.stringify({ mcpServers: { b: { url: two.url } } }));
      renameSync(`${config}.tmp`, config);
      await cli.waitForLine(/config reloaded: removed a \(1 unchanged\)$/);
      await cli.waitForLine(/ a {2}closing -> closed/);

      cli.child.kill('SIGINT');
      expect(await cli.exited).toBe(0);
      expect(cli.lines.filter((line) => / a {2}.* -> ready/.test(line))).toHaveLength(1);
      expect(cli.lines.filter((line) => / b {2}.* -> ready/.test(line))).toHaveLength(1);
    } finally {
      cli.child.kill('SIGKILL');
    }
  }, 30_000);
});

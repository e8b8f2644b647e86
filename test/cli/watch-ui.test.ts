/** `mcp-supervisor watch --ui`: the dashboard's URL is printed, it serves the page with its token only. */
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { spawnCli } from './helpers.js';

let fixture: HttpFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('mcp-supervisor watch --ui', () => {
  it('prints the dashboard URL (127.0.0.1, a token); the page answers with it and 401 without', async () => {
    fixture = await startHttpFixture();
    const cli = spawnCli(['watch', '--ui', '--plain', '--url', fixture.url, '--name', 'docs']);
    const line = await cli.waitForLine(/dashboard: http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\//);
    const url = /http:\S+/.exec(line)![0];
    await cli.waitForLine(/docs {2}initializing -> ready/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('mcp-supervisor');
    const status = (await (await fetch(`${url}api/status`)).json()) as { rows: { name: string; state: string }[] };
    expect(status.rows).toEqual([expect.objectContaining({ name: 'docs', state: 'ready' })]);
    expect((await fetch(new URL(url).origin + '/')).status).toBe(401);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });
});

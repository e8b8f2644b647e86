/**
 * OAuth from the command line, against a real authorization server and protected MCP resource
 * (servers/oauth-server.ts). The test plays the browser: it reads the authorization URL the
 * CLI prints on stderr, GETs it, and follows the one redirect to the CLI's loopback listener.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { approveAtOnce, startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';
import { connect, fileTokenStore } from '../../src/index.js';
import { freePort, runCli, spawnCli, type CliRun, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let dir: string;
let fixture: OAuthFixture;
const extra: OAuthFixture[] = [];
const runs: CliRun[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-cli-auth-'));
  fixture = await startOAuthServer({ refreshTokens: true });
});
afterEach(async () => {
  // A failed test may leave a CLI waiting minutes for a browser that never comes.
  for (const run of runs.splice(0))
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  await Promise.all(extra.splice(0).map((f) => f.close()));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await fixture.close();
});

function start(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const run = spawnCli(args, env);
  runs.push(run);
  return run;
}

let files = 0;
function tempPath(name: string): string {
  return join(dir, `${++files}-${name}`);
}

const URL_LINE = /^\[([^\]]+)\] Open this URL in your browser to authorize: (\S+)$/m;

/** Resolves with the first stderr match (seen or still to come); rejects when the CLI exits first. */
function waitForStderr(run: CliRun, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`no stderr matching ${String(pattern)} within ${timeoutMs} ms; stderr:\n${run.stderr()}`)),
      timeoutMs,
    );
    const check = () => {
      const match = pattern.exec(run.stderr());
      if (match) finish(undefined, match);
    };
    const onExit = () => {
      check();
      finish(
        new Error(
          `the CLI exited before printing ${String(pattern)}; stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`,
        ),
      );
    };
    const finish = (error?: Error, match?: RegExpExecArray) => {
      clearTimeout(timer);
      run.child.stderr!.off('data', check);
      run.child.off('close', onExit);
      if (error) reject(error);
      else resolve(match!);
    };
    run.child.stderr!.on('data', check);
    run.child.once('close', onExit);
    check();
  });
}

function httpGet(url: string): Promise<{ status: number; location: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    }).on('error', reject);
  });
}

/** The user's browser: open the printed URL, follow the authorization server's redirect home. */
async function playBrowser(
  run: CliRun,
): Promise<{ server: string; authorizationUrl: URL; callback: URL; page: string }> {
  const [, server, href] = await waitForStderr(run, URL_LINE);
  const authorize = await httpGet(href!);
  expect(authorize.status).toBe(302);
  const callback = new URL(authorize.location!);
  const landing = await httpGet(callback.href);
  expect(landing.status).toBe(200);
  return { server: server!, authorizationUrl: new URL(href!), callback, page: landing.body };
}

type Tokens = { access_token: string; refresh_token?: string };
type Credential = { tokens?: Tokens; issuers?: Record<string, { tokens?: Tokens }> };

/** The credentials in a store file (`entries`, each value as JSON text) or a token file of earlier versions. */
function credentialsIn(path: string): Credential[] {
  if (!existsSync(path)) return [];
  const data = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  if (typeof data['version'] === 'number' && typeof data['entries'] === 'object') {
    return Object.entries(data['entries'] as Record<string, { json: string }>)
      .filter(([key]) => key.startsWith('auth:'))
      .map(([, entry]) => JSON.parse(entry.json) as Credential);
  }
  return Object.values(data) as Credential[];
}

function expectPrivateStore(path: string, output: string): void {
  expect(existsSync(path)).toBe(true);
  if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
  // Tokens are kept per issuer (`issuers`); the older flat `tokens` is read too.
  const tokens = credentialsIn(path)
    .flatMap((entry) => [entry.tokens, ...Object.values(entry.issuers ?? {}).map((issuer) => issuer.tokens)])
    .flatMap((entry) => [entry?.access_token, entry?.refresh_token])
    .filter((t): t is string => !!t);
  expect(tokens.length).toBeGreaterThan(0);
  for (const token of tokens) expect(output).not.toContain(token);
}

describe('mcp-supervisor --oauth', () => {
  it('call: prints the URL, takes the redirect on its loopback listener, prints the result; the next run needs no browser', async () => {
    const storeFile = tempPath('store.json');
    const args = [
      'call',
      'echo',
      '{"text":"authorized"}',
      '--url',
      fixture.mcpUrl,
      '--name',
      'docs',
      '--oauth',
      '--store',
      storeFile,
    ];
    const run = start(args);
    const browser = await playBrowser(run);
    expect(browser.server).toBe('docs');
    expect(browser.authorizationUrl.origin).toBe(fixture.origin);
    expect(browser.callback.hostname).toBe('127.0.0.1');
    expect(browser.callback.pathname).toBe('/callback');
    expect(browser.callback.searchParams.get('code')).toBeTruthy();
    expect(browser.page).toContain('Authorization complete');
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.stdout())).toEqual({ content: [{ type: 'text', text: 'authorized' }] });
    expectPrivateStore(storeFile, run.stdout() + run.stderr());

    const authorizations = fixture.authorizeRequests().length;
    const again = await runCli([
      'call',
      'echo',
      '{"text":"again"}',
      '--url',
      fixture.mcpUrl,
      '--name',
      'docs',
      '--oauth',
      '--store',
      storeFile,
    ]);
    expect(again.stderr).not.toMatch(URL_LINE);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ content: [{ type: 'text', text: 'again' }] });
    expect(fixture.authorizeRequests()).toHaveLength(authorizations);
    expectPrivateStore(storeFile, again.stdout + again.stderr);

    const tools = await runCli([
      'tools',
      '--json',
      '--url',
      fixture.mcpUrl,
      '--name',
      'docs',
      '--oauth',
      '--store',
      storeFile,
    ]);
    expect(tools.code).toBe(0);
    expect(tools.stderr).not.toMatch(URL_LINE);
    expect((JSON.parse(tools.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo']);
  });

  it('status: the login happens before the server counts as ready, and is kept for the next command', async () => {
    const storeFile = tempPath('store.json');
    const run = start(['status', '--url', fixture.mcpUrl, '--name', 'docs', '--oauth', '--store', storeFile]);
    await playBrowser(run);
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.stdout())).toMatchObject({ docs: { state: 'ready' } });
    expectPrivateStore(storeFile, run.stdout() + run.stderr());

    const next = await runCli([
      'call',
      'echo',
      '{"text":"kept"}',
      '--url',
      fixture.mcpUrl,
      '--name',
      'docs',
      '--oauth',
      '--store',
      storeFile,
    ]);
    expect(next.stderr).not.toMatch(URL_LINE);
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout)).toEqual({ content: [{ type: 'text', text: 'kept' }] });
  });

  it('a refusal in the browser ends the command with exit 1 and the reason; nothing is stored', async () => {
    const refusing = await startOAuthServer({ authorizeError: 'access_denied' });
    extra.push(refusing);
    const storeFile = tempPath('store.json');
    const run = start([
      'call',
      'echo',
      '{}',
      '--url',
      refusing.mcpUrl,
      '--name',
      'docs',
      '--oauth',
      '--store',
      storeFile,
    ]);
    const browser = await playBrowser(run);
    expect(browser.callback.searchParams.get('error')).toBe('access_denied');
    expect(browser.page).toContain('Authorization failed');
    expect(await run.exited).toBe(1);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toContain("server 'docs'");
    expect(run.stderr()).toContain('access_denied');
    // The client registration may be kept; no token is.
    const tokens = credentialsIn(storeFile).flatMap((entry) => [
      entry.tokens,
      ...Object.values(entry.issuers ?? {}).map((issuer) => issuer.tokens),
    ]);
    expect(tokens.filter(Boolean)).toEqual([]);
  });

  it('a token file written by an earlier version is read: no new login, and the login moves into the store', async () => {
    // What an earlier version left behind: a login kept in fileTokenStore, with no store.
    const tokenFile = tempPath('old-tokens.json');
    const earlier = await connect({
      url: fixture.mcpUrl,
      auth: { redirectUri: 'http://127.0.0.1:1/callback', onRedirect: approveAtOnce, store: fileTokenStore(tokenFile) },
    });
    await earlier.close();
    expect(credentialsIn(tokenFile).length).toBe(1);
    const authorizations = fixture.authorizeRequests().length;
    const storeFile = tempPath('store.json');
    const args = ['call', 'echo', '{"text":"upgraded"}', '--url', fixture.mcpUrl, '--name', 'docs', '--oauth'];
    const upgraded = await runCli([...args, '--store', storeFile], { MCP_SUPERVISOR_TOKEN_FILE: tokenFile });
    expect(upgraded.stderr).not.toMatch(URL_LINE);
    expect(upgraded.code).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toEqual({ content: [{ type: 'text', text: 'upgraded' }] });
    expect(fixture.authorizeRequests()).toHaveLength(authorizations);
    expectPrivateStore(storeFile, upgraded.stdout + upgraded.stderr);
    // The store holds it now: a run without the old file needs no login either.
    const later = await runCli([...args, '--store', storeFile, '--token-file', tempPath('none.json')]);
    expect(later.stderr).not.toMatch(URL_LINE);
    expect(later.code).toBe(0);
    expect(fixture.authorizeRequests()).toHaveLength(authorizations);
  });

  it('--oauth needs --url', async () => {
    const { code, stderr } = await runCli(['status', '--command', process.execPath, '--oauth']);
    expect(code).toBe(2);
    expect(stderr).toContain('--oauth needs --url');
  });
});

describe('"auth" in a config file', () => {
  it('binds the port and path of a loopback redirectUri, and honours $MCP_SUPERVISOR_STORE', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/oauth/done`;
    const config = tempPath('mcp.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { docs: { url: fixture.mcpUrl, auth: { redirectUri, clientName: 'cli-test' } } } }),
    );
    const storeFile = tempPath('env-store.json');
    const run = start(['call', 'docs', 'echo', '{"text":"configured"}', '--config', config], {
      MCP_SUPERVISOR_STORE: storeFile,
    });
    const browser = await playBrowser(run);
    expect(browser.authorizationUrl.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(`${browser.callback.origin}${browser.callback.pathname}`).toBe(redirectUri);
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.stdout())).toEqual({ content: [{ type: 'text', text: 'configured' }] });
    expectPrivateStore(storeFile, run.stdout() + run.stderr());
  });

  it('invalid OAuth options: exit 2, naming the file and servers.<name>.auth.<field>', async () => {
    const config = tempPath('bad-grant.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { docs: { url: fixture.mcpUrl, auth: { grant: 'nope' } } } }));
    const { code, stdout, stderr } = await runCli(['status', '--config', config]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${config}: servers.docs.auth.grant:`);
  });

  it('a redirectUri the CLI cannot receive on this machine: exit 2, naming the field', async () => {
    const config = tempPath('remote-redirect.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { docs: { url: fixture.mcpUrl, auth: { redirectUri: 'https://app.example.com/callback' } } },
      }),
    );
    const { code, stderr } = await runCli(['status', '--config', config]);
    expect(code).toBe(2);
    expect(stderr).toContain('servers.docs.auth.redirectUri: the CLI receives the browser');
  });
});

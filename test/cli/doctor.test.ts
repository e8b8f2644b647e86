/**
 * `doctor`, in-process against servers this file starts: a healthy Streamable HTTP server, a port
 * nothing listens on, a 401, a legacy HTTP+SSE server, a wrong path, a stdio server that exits,
 * a missing command; and once as a spawned CLI in a folder with `.mcp.json` (discovery), over TLS:
 * HTTPS in front of the SDK server with certificates made here by `openssl` (a CA of the test's,
 * trusted through NODE_EXTRA_CA_CERTS; an expired certificate, one for another name, a self-signed
 * one nobody trusts, and a port that does not speak TLS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/commands.js';
import type { ServerMap } from '../../src/cli/load-config.js';
import { startLegacySseFixture, type LegacySseFixture } from '../../servers/legacy-sse-fixture.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';
import { freePort, runCli } from './helpers.js';

let sdk: SdkServer;
let legacy: LegacySseFixture;
let guarded: Server;
let guardedUrl: string;

beforeAll(async () => {
  [sdk, legacy] = await Promise.all([startSdkServer({ stateful: true }), startLegacySseFixture()]);
  guarded = createServer((req, res) => {
    req.resume();
    res.writeHead(401, {
      'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
    });
    res.end();
  });
  await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
  guardedUrl = `http://127.0.0.1:${(guarded.address() as { port: number }).port}/mcp`;
});
afterAll(async () => {
  await Promise.all([sdk.close(), legacy.close(), new Promise((resolve) => guarded.close(resolve))]);
});

async function doctor(servers: ServerMap): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await runDoctor(servers, [], 3_000, {
    out: (chunk) => void (text += chunk),
    err: (chunk) => void (text += chunk),
  });
  return { code, text };
}

describe('doctor', () => {
  it('passes every step of a healthy server: DNS, TCP, HTTP, authorization, initialize, era, tools, round trip', async () => {
    const { code, text } = await doctor({ ok: { url: sdk.url } });
    expect(code).toBe(0);
    for (const step of [
      '✓ DNS',
      '✓ TCP',
      '- TLS',
      '✓ HTTP          POST /mcp → 200',
      '✓ authorization none asked for',
      '✓ initialize',
      '✓ era           legacy: 2025',
      '✓ tools',
      '✓ round trip    ping',
    ])
      expect(text).toContain(step);
    expect(text).toContain('countdown');
    expect(text).toContain('all steps passed');
    expect(sdk.sessionCount()).toBe(0); // the probe's session and the runtime's were closed
  });

  it('names the failed step and what to do: refused, 401, wrong path, legacy SSE', async () => {
    const port = await freePort();
    const { code, text } = await doctor({
      refused: { url: `http://127.0.0.1:${port}/mcp` },
      guarded: { url: guardedUrl },
      path: { url: sdk.url.replace(/\/mcp$/, '/nope') },
      legacy: { url: `${legacy.origin}/sse`, type: 'auto' },
    });
    expect(code).toBe(1);
    expect(text).toMatch(/✗ TCP +127\.0\.0\.1:\d+ refused the connection[^\n]*\n +→ start the server/);
    expect(text).toMatch(
      /✗ authorization HTTP 401: the server wants authorization \(protected resource metadata: [^)]+\)\n +→ add "auth": \{\}/,
    );
    expect(text).toMatch(/✗ HTTP +POST \/nope → 404[^\n]*\n +→ check the path[^\n]*\n +- the rest +skipped/);
    // A failed HTTP step is not followed by a passed authorization step: that is skipped with the rest.
    const pathReport = text.slice(text.indexOf('\npath\n'), text.indexOf('\nlegacy\n'));
    expect(pathReport).not.toContain('authorization');
    expect(text).toMatch(/legacy HTTP\+SSE server\n +→ "type": "auto"/);
    expect(text.match(/- the rest +skipped/g)?.length).toBe(3);
  });

  it('stdio: a missing command, and a process that exits, with its exit code and stderr', async () => {
    const { code, text } = await doctor({
      missing: { command: 'mcp-supervisor-no-such-command' },
      crash: { command: process.execPath, args: ['-e', "console.error('cannot open /nope'); process.exit(3)"] },
    });
    expect(code).toBe(1);
    expect(text).toMatch(/✗ command +mcp-supervisor-no-such-command: not found on PATH[^\n]*\n +→ install it/);
    expect(text).toMatch(/✗ process +exited with code 3; stderr:\n +cannot open \/nope\n +→ /);
  });

  it('an `npx mcp-remote <url>` entry: says it hides restarts and to connect to the URL directly', async () => {
    const { text } = await doctor({
      direct: { command: process.execPath, args: ['-e', 'process.exit(3)', 'mcp-remote', sdk.url] },
      // No npx on this PATH: the steps stop at the command, nothing is fetched.
      remote: {
        command: 'npx',
        args: ['-y', 'mcp-remote@0.1.29', `${sdk.url}?key=k`, '--header', 'Authorization: Bearer x'],
        env: { PATH: '/nonexistent' },
      },
    });
    const remote = text.slice(text.indexOf('remote\n'));
    expect(remote).toMatch(
      new RegExp(
        `! bridge +runs mcp-remote, a stdio bridge to ${sdk.url}: restarts and lost sessions behind it are hidden[^\n]*\n +→ connect to the URL directly: "url": "${sdk.url}"`,
      ),
    );
    expect(remote).not.toMatch(/bridge[^\n]*\?key/);
    // Only a runner (npx, pnpm dlx, bunx …) running mcp-remote is one.
    expect(text.slice(0, text.indexOf('remote\n'))).not.toContain('bridge');
  });
});

/** Certificates for the TLS tests, made with the openssl command in `dir`: a CA, and leaves it signs. */
function makeCertificates(dir: string) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = (name: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  key('ca');
  openssl('req', '-x509', '-key', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=doctor test CA');
  const leaf = (name: string, altNames: string, days: number) => {
    key(name);
    openssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${altNames}\n`);
    // -days -1: valid until the day before it was made, i.e. expired.
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      String(days),
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  };
  leaf('good', 'IP:127.0.0.1,DNS:localhost', 30);
  leaf('expired', 'IP:127.0.0.1', -1);
  leaf('elsewhere', 'DNS:mcp.example.org', 30);
  key('self');
  openssl(
    'req',
    '-x509',
    '-key',
    'self.key',
    '-out',
    'self.pem',
    '-days',
    '30',
    '-subj',
    '/CN=self',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  );
  const read = (name: string) => ({
    key: readFileSync(join(dir, `${name}.key`)),
    cert: readFileSync(join(dir, `${name}.pem`)),
  });
  return {
    ca: join(dir, 'ca.pem'),
    good: read('good'),
    expired: read('expired'),
    elsewhere: read('elsewhere'),
    self: read('self'),
  };
}

/** TLS in front of a plain TCP port on 127.0.0.1 (the SDK server): an HTTPS server with that certificate. */
async function tlsInFront(
  target: number,
  credentials: { key: Buffer; cert: Buffer },
): Promise<{ server: TlsServer; url: string }> {
  const server = createTlsServer(credentials, (socket) => {
    const upstream = tcpConnect(target, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    const end = () => (socket.destroy(), upstream.destroy());
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.on('tlsClientError', () => {}); // the rejected handshakes are the point
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://127.0.0.1:${(server.address() as { port: number }).port}/mcp` };
}

describe('doctor as a command', () => {
  it('in a folder with .mcp.json says which file it used; over TLS it passes a trusted certificate; an expired one, one for another name, an untrusted one and a plain port each end with what to do', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mcp-supervisor-doctor-tls-'));
    const servers: TlsServer[] = [];
    try {
      const certificates = makeCertificates(folder);
      const sdkPort = Number(new URL(sdk.url).port);
      const front = async (credentials: { key: Buffer; cert: Buffer }) => {
        const { server, url } = await tlsInFront(sdkPort, credentials);
        servers.push(server);
        return url;
      };
      const config = {
        mcpServers: {
          sdk: { url: sdk.url },
          good: { url: await front(certificates.good) },
          expired: { url: await front(certificates.expired) },
          elsewhere: { url: await front(certificates.elsewhere) },
          untrusted: { url: await front(certificates.self) },
          plain: { url: sdk.url.replace('http://', 'https://') },
        },
      };
      // Found without --config: the folder's .mcp.json (one spawned CLI for discovery and TLS).
      writeFileSync(join(folder, '.mcp.json'), JSON.stringify(config));
      const run = await runCli(['doctor'], { NODE_EXTRA_CA_CERTS: certificates.ca }, folder);
      const report = (name: string) => run.stdout.split(/\n(?=\S)/).find((part) => part.startsWith(`${name}\n`)) ?? '';
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('using ./.mcp.json');
      expect(report('sdk')).toContain('all steps passed');
      // Trusted through NODE_EXTRA_CA_CERTS: TLS, then HTTP and the session over it.
      expect(report('good')).toMatch(
        /✓ TLS +TLSv1\.3, certificate for 127\.0\.0\.1, localhost valid (29|30) more days/,
      );
      expect(report('good')).toMatch(/✓ HTTP +POST \/mcp → 200/);
      expect(report('good')).toContain('all steps passed');
      expect(report('expired')).toMatch(
        /✗ TLS +the certificate for 127\.0\.0\.1 expired on [^\n]+\n +→ the server's operator must renew it/,
      );
      expect(report('elsewhere')).toMatch(
        /✗ TLS +the certificate is for mcp\.example\.org, not 127\.0\.0\.1\n +→ use a URL with a name the certificate is for/,
      );
      expect(report('untrusted')).toMatch(
        /✗ TLS +[^\n]*self[- ]signed[^\n]*\n +→ the certificate is not trusted here: add the CA [^\n]*NODE_EXTRA_CA_CERTS/i,
      );
      expect(report('plain')).toMatch(/✗ TLS +[^\n]+\n +→ the port does not speak TLS: try http:\/\//);
      for (const name of ['expired', 'elsewhere', 'untrusted', 'plain'])
        expect(report(name)).toMatch(/- the rest +skipped/);
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

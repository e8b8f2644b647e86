/**
 * Values expanded from the environment are secrets wherever they appear, whatever their header
 * is called: a server that echoes the request (URL and headers) in its error must not get them
 * into errors, status, transitions or inspection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { createSupervisor, fromMcpServersJson, type Supervisor } from '../../src/index.js';

let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;
afterEach(async () => {
  await sup?.stop();
  await fixture?.close();
});

describe('interpolated secrets', () => {
  it('never leave the runtime: errors, status, transitions, inspection', async () => {
    fixture = await startHttpFixture();
    const tenant = 'tenant-7f3a9c';
    const servers = fromMcpServersJson(
      // A query parameter with a harmless name, and a header likewise: only the expansion makes them secret.
      { mcpServers: { docs: { url: `${fixture.url}?tenant=\${TENANT}`, headers: { 'X-Tenant': '${TENANT}' } } } },
      { env: { TENANT: tenant } },
    );
    const seen: string[] = [];
    sup = createSupervisor({ servers, inspect: (event) => seen.push(JSON.stringify(event)) });
    sup.on('transition', (event) => seen.push(JSON.stringify(event)));
    await sup.start();
    expect(fixture.requests.some((r) => r.headers['x-tenant'] === tenant && r.path.endsWith(tenant))).toBe(true);
    fixture.faults.echoRequestOnce = 'tools/call';
    const error = await sup
      .server('docs')
      .callTool('echo', { text: 'hi' })
      .then(
        () => new Error('expected the call to fail'),
        (e: unknown) => e as Error,
      );
    expect(error).toBeInstanceOf(Error);
    seen.push(error.message, String((error as { body?: string }).body), JSON.stringify(sup.status()));
    expect(seen.join('\n')).toContain('[redacted]');
    expect(seen.join('\n')).not.toContain(tenant);
  });
});

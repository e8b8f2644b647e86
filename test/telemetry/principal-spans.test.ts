/**
 * Telemetry of a principal's connection (docs/principals.md): its spans carry the principal's
 * label (a stable hash by default), never the id itself, and a shared server's spans none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor } from '../../src/index.js';
import { startIdentityServer } from '../integration/identity-server.js';
import { registerSdk, spansNamed, type RegisteredSdk } from './sdk.js';

let sdk: RegisteredSdk;
beforeAll(() => {
  sdk = registerSdk();
});
afterAll(async () => {
  await sdk.shutdown();
});

describe('principal in telemetry', () => {
  it("a principal connection's spans carry its label; a shared server's carry none", async () => {
    const server = await startIdentityServer();
    const sup = createSupervisor({
      servers: {
        mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } },
        shared: { url: server.url, headers: { 'x-user': 'all' } },
      },
    });
    try {
      await sup.start();
      const alice = sup.as('alice@example.com');
      await alice.server('mine').callTool('whoami');
      await alice.server('shared').callTool('whoami');
      const calls = spansNamed(sdk.spans(), 'tools/call whoami');
      const byServer = new Map(calls.map((span) => [span.attributes['mcp_supervisor.server.name'], span]));
      expect(byServer.get('mine')!.attributes['mcp_supervisor.principal']).toBe(alice.label);
      expect(byServer.get('shared')!.attributes['mcp_supervisor.principal']).toBeUndefined();
      expect(JSON.stringify(calls.map((span) => span.attributes))).not.toContain('alice@example.com');
    } finally {
      await sup.stop();
      await server.close();
    }
  });
});

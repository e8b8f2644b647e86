/**
 * The clients of the era comparison (bench/eras.ts), against one dual-era bench server
 * (bench/server.ts `--mode dual`): raw undici speaking the 2026-07-28 wire, and the official v2
 * client (`@modelcontextprotocol/client`) in either era. Ours is `connect()` in clients.ts.
 */
import { Pool } from 'undici';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export const MODERN_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'bench', version: '1' };
const CALL = { name: 'echo', arguments: {} };

/** BenchClient (clients.ts imports this file). */
interface EraClient {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Raw undici, modern wire: one Pool, no handshake beyond one `server/discover`, no session id, no
 * GET stream; every POST carries the `_meta` envelope and the `MCP-Protocol-Version`,
 * `Mcp-Method` and `Mcp-Name` headers (pre-built: there is one method and one tool).
 */
export async function rawModern(url: string): Promise<EraClient> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 128 });
  const base = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  };
  const callHeaders = { ...base, 'mcp-method': 'tools/call', 'mcp-name': CALL.name };
  const post = async (headers: Record<string, string>, body: object) => {
    const res = await pool.request({ path: u.pathname, method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text}`);
    const message = JSON.parse(text) as { result?: unknown; error?: unknown };
    if (message.result === undefined) throw new Error(`no result: ${text}`);
    return message.result;
  };
  await post(
    { ...base, 'mcp-method': 'server/discover' },
    { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: meta } },
  );
  let id = 0;
  return {
    call: () => post(callHeaders, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { ...CALL, _meta: meta } }),
    close: () => pool.destroy(),
  };
}

/** The official v2 client: pinned to 2026-07-28 (modern), or its default 2025 handshake (legacy). */
export async function sdkV2(url: string, era: 'modern' | 'legacy'): Promise<EraClient> {
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: era === 'modern' ? { pin: MODERN_VERSION } : 'legacy' },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { call: () => client.callTool(CALL), close: () => client.close() };
}

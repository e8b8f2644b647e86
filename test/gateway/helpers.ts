/**
 * The gateway as hosts meet it: a gateway in this process over Streamable HTTP, and the official
 * SDK v1 and v2 `Client`s connected to it with its bearer token.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { createGateway, type Gateway } from '../../src/gateway/gateway.js';
import { serveGatewayHttp, type HttpService } from '../../src/gateway/http.js';
import type { GatewayOptions } from '../../src/gateway/options.js';

export const TOKEN = 'test-token-0123456789';

export interface RunningGateway {
  gateway: Gateway;
  http: HttpService;
  close(): Promise<void>;
}

export async function startGateway(
  options: GatewayOptions,
  token: string | undefined = TOKEN,
): Promise<RunningGateway> {
  const gateway = createGateway(options);
  await gateway.start();
  const http = await serveGatewayHttp(gateway, { token });
  return {
    gateway,
    http,
    close: async () => {
      await http.close();
      await gateway.close();
    },
  };
}

const INFO = { name: 'host', version: '1.0.0' };
const headers = { authorization: `Bearer ${TOKEN}` };

export async function v1Client(url: string, capabilities: Record<string, unknown> = {}): Promise<ClientV1> {
  const client = new ClientV1(INFO, { capabilities });
  await client.connect(new HttpV1(new URL(url), { requestInit: { headers } }));
  return client;
}

/** `modern`: the v2 Client negotiates 2026-07-28 (`versionNegotiation: auto`); otherwise a 2025 session. */
export async function v2Client(
  url: string,
  modern: boolean,
  capabilities: Record<string, unknown> = {},
  handlers: (client: ClientV2) => void = () => {},
): Promise<ClientV2> {
  const client = new ClientV2(INFO, { capabilities, ...(modern ? { versionNegotiation: { mode: 'auto' } } : {}) });
  handlers(client);
  await client.connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  return client;
}

export function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((block) => block.text ?? '').join('');
}

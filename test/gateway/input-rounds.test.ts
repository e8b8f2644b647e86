/**
 * A server that asks the user something while answering `prompts/get` or `resources/read`: a
 * 2026-07-28 host (the SDK v2 Client) is asked in input rounds of that request, as for
 * `tools/call`, and the server gets the host's answer; a 2025 host gets the question as a request.
 * The server's progress during such a call reaches the round the host is waiting on, before and
 * after its answer.
 * The upstream is a real SDK v1 server on 127.0.0.1 (one session: the gateway's connection).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, v2Client, type RunningGateway } from './helpers.js';

let http: HttpServer;
let gw: RunningGateway;

/** The user's answer, as the server got it. */
async function askColor(server: McpServer, requestId: string | number): Promise<string> {
  const answer = await server.server.elicitInput(
    {
      message: 'Which color?',
      requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
    },
    { relatedRequestId: requestId },
  );
  return answer.action === 'accept' ? `color: ${String(answer.content?.['color'])}` : `no color (${answer.action})`;
}

beforeAll(async () => {
  const server = new McpServer({ name: 'asker', version: '1.0.0' });
  server.registerPrompt('ask', { description: 'asks the user first' }, async (extra) => ({
    messages: [{ role: 'user', content: { type: 'text', text: await askColor(server, extra.requestId) } }],
  }));
  server.registerResource('asked', 'asked://color', {}, async (uri, extra) => ({
    contents: [{ uri: uri.href, text: await askColor(server, extra.requestId) }],
  }));
  // Progress before the question and after the answer: a 2026-07-28 host hears both, each on the round it is waiting on.
  server.registerTool('steps', { description: 'reports progress, asks, reports again' }, async (extra) => {
    const token = extra._meta?.progressToken;
    const progress = (value: number) =>
      token === undefined
        ? Promise.resolve()
        : extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: value, total: 2 },
          });
    await progress(1);
    const color = await askColor(server, extra.requestId);
    await progress(2);
    return { content: [{ type: 'text', text: color }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID });
  await server.connect(transport);
  http = createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  gw = await startGateway({ servers: { asker: { url, keepalive: false } } });
});

afterAll(async () => {
  await gw?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
});

describe('input rounds of prompts/get and resources/read', () => {
  it.each([true, false])('asks the host (2026-07-28: %s) and gives the server its answer', async (modern) => {
    const asked: string[] = [];
    const client = await v2Client(gw.http.url, modern, { elicitation: { form: {} } }, (host) => {
      host.setRequestHandler('elicitation/create', (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { color: modern ? 'blue' : 'green' } };
      });
    });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(modern ? '2026-07-28' : '2025-11-25');
      const color = modern ? 'blue' : 'green';
      const prompt = await client.getPrompt({ name: 'asker__ask' });
      expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: `color: ${color}` });
      const read = await client.readResource({ uri: 'asked://color' });
      expect(read.contents[0]).toMatchObject({ uri: 'asked://color', text: `color: ${color}` });
      expect(asked).toEqual(['Which color?', 'Which color?']);
    } finally {
      await client.close();
    }
  });

  it.each([true, false])(
    "carries the server's progress to the round the host waits on, before and after its answer (2026-07-28: %s)",
    async (modern) => {
      const client = await v2Client(gw.http.url, modern, { elicitation: { form: {} } }, (host) => {
        host.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { color: 'red' } }));
      });
      try {
        const progress: number[] = [];
        const result = await client.callTool(
          { name: 'asker__steps', arguments: {} },
          {
            // The v2 Client reports its own rounds as progress too (with a message, no total): the server's have a total.
            onprogress: (p: { progress: number; total?: number }) => void (p.total === 2 && progress.push(p.progress)),
          },
        );
        expect(result.content).toEqual([{ type: 'text', text: 'color: red' }]);
        expect(progress).toEqual([1, 2]);
      } finally {
        await client.close();
      }
    },
  );

  it('refuses a round whose requestState the gateway never gave', async () => {
    const client = await v2Client(gw.http.url, true, { elicitation: { form: {} } });
    try {
      await expect(
        client.request({ method: 'prompts/get', params: { name: 'asker__ask', requestState: 'forged' } } as never),
      ).rejects.toThrow(/requestState/);
    } finally {
      await client.close();
    }
  });
});

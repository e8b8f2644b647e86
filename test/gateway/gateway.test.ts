/**
 * `mcp-supervisor serve` over Streamable HTTP (issue #32): the official SDK v1 and v2 Clients, in
 * both protocol eras, see every upstream server as one MCP server — tools under the catalog's
 * names, resources, prompts, completion, progress, the servers' requests (elicitation) answered
 * by the host — and the gateway refuses what a local server must refuse (no token, a foreign
 * Origin or Host). Upstream: server-everything over stdio and an SDK example server over HTTP.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING_ENTRY } from '../../servers/everything-server.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { refusingUrl } from '../integration/helpers.js';
import { startGateway, text, TOKEN, v1Client, v2Client, type RunningGateway } from './helpers.js';

let upstream: SdkExampleServer;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  gw = await startGateway({
    servers: {
      everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] },
      example: { url: upstream.url, keepalive: false },
    },
    catalog: { servers: { everything: { deny: [/^gzip/] } } },
    statusTool: true,
  });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('gateway over Streamable HTTP', () => {
  it('the v1 Client (a 2025 session) sees every server as one: tools under the catalog names, calls routed', async () => {
    const client = await v1Client(gw.http.url);
    try {
      expect(client.getServerVersion()?.name).toBe('mcp-supervisor');
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['everything__echo', 'example__echo', 'mcp_supervisor_status']));
      expect(names.some((name) => name.startsWith('everything__gzip'))).toBe(false); // the catalog's deny filter
      expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'via gateway' } }))).toBe(
        'via gateway',
      );
      expect(text(await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } }))).toBe('Echo: hi');
      const status = JSON.parse(text(await client.callTool({ name: 'mcp_supervisor_status', arguments: {} })));
      expect(status.example.state).toBe('ready');
      expect(JSON.stringify(status)).not.toContain(TOKEN);
      const unknown = await client.callTool({ name: 'nope__tool', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toBe('Unknown tool: nope__tool');
    } finally {
      await client.close();
    }
  });

  it('passes progress through, and resources, templates, prompts and completion', async () => {
    const client = await v1Client(gw.http.url);
    try {
      const progress: number[] = [];
      const result = await client.callTool(
        { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(text(result)).toMatch(/completed/);
      expect(progress).toEqual([1, 2]);
      const resources = (await client.listResources()).resources;
      expect(resources.length).toBeGreaterThan(0);
      const read = await client.readResource({ uri: resources[0]!.uri });
      expect(read.contents[0]!.uri).toBe(resources[0]!.uri);
      const templates = (await client.listResourceTemplates()).resourceTemplates;
      expect(templates.length).toBeGreaterThan(0);
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toContain('everything__simple-prompt');
      const prompt = await client.getPrompt({ name: 'everything__simple-prompt' });
      expect(prompt.messages.length).toBeGreaterThan(0);
      const completion = await client.complete({
        ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
        argument: { name: 'department', value: 'E' },
      });
      expect(completion.completion.values).toContain('Engineering');
    } finally {
      await client.close();
    }
  });

  it("forwards a server's elicitation to the host whose call it answers, and returns the host's answer", async () => {
    const client = await v1Client(gw.http.url, { elicitation: { form: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'decline' };
    });
    try {
      const result = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
      expect(asked).toHaveLength(1);
      expect(text(result)).toMatch(/decline/i);
    } finally {
      await client.close();
    }
  });

  it("asks a 2026-07-28 host the server's questions in input rounds of its own call, and returns its answers", async () => {
    const asked: string[] = [];
    const client = await v2Client(gw.http.url, true, { elicitation: { form: {} }, sampling: {} }, (host) => {
      host.setRequestHandler('elicitation/create', (request) => {
        asked.push(`elicit: ${request.params.message}`);
        return { action: 'accept', content: { color: 'blue' } };
      });
      host.setRequestHandler('sampling/createMessage', () => {
        asked.push('sample');
        return { role: 'assistant', content: { type: 'text', text: 'sampled by the host' }, model: 'host-model' };
      });
    });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/^elicit: /);
      expect(text(elicited)).toMatch(/accept/i);
      const sampled = await client.callTool({
        name: 'everything__trigger-sampling-request',
        arguments: { prompt: 'hi', maxTokens: 10 },
      });
      expect(asked).toEqual([asked[0], 'sample']);
      expect(text(sampled)).toContain('sampled by the host');
      // A round naming a state the gateway never gave is refused.
      await expect(
        client.request({
          method: 'tools/call',
          params: { name: 'everything__echo', arguments: { message: 'x' }, requestState: 'forged' },
        } as never),
      ).rejects.toThrow(/requestState/);
    } finally {
      await client.close();
    }
  });

  it.each([true, false])(
    'the v2 Client (modern era: %s) calls, reads and lists through the gateway',
    async (modern) => {
      const client = await v2Client(gw.http.url, modern);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(modern ? '2026-07-28' : '2025-11-25');
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toContain('example__lookup');
        expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'v2' } }))).toBe('v2');
        const resources = (await client.listResources()).resources;
        expect((await client.readResource({ uri: resources[0]!.uri })).contents.length).toBe(1);
      } finally {
        await client.close();
      }
    },
  );

  it('refuses a request without the bearer token, from a foreign Origin, or for a foreign Host', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(gw.http.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    const noToken = await post({});
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' })).status).toBe(403);
    expect(await statusWithHost(gw.http.url, 'evil.example:80', JSON.stringify(init))).toBe(403);
    const ok = await post({ authorization: `Bearer ${TOKEN}`, origin: 'http://localhost:5173' });
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it('refuses a body that is not JSON (parse error) and one over 4 MB (413)', async () => {
    const post = (body: string) =>
      fetch(gw.http.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
        },
        body,
      });
    const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const tooLarge = await post(`"${'x'.repeat(4 * 1024 * 1024)}"`);
    expect(tooLarge.status).toBe(413);
    await tooLarge.body?.cancel();
  });
});

describe('gateway with a server that is down', () => {
  it('holds a call to a server that went away, then fails it naming the server; the host session goes on', async () => {
    const flaky = await startSdkExampleServer({ unknownSessionStatus: 404 });
    const local = await startGateway({
      servers: { flaky: { url: flaky.url, keepalive: false, requestTimeoutMs: 2_000 } },
      holdMs: 300,
    });
    const client = await v1Client(local.http.url);
    try {
      expect(text(await client.callTool({ name: 'flaky__echo', arguments: { text: 'up' } }))).toBe('up');
      await flaky.stop();
      await local.gateway.supervisor
        .server('flaky')
        .reconnect()
        .catch(() => {});
      const down = await client.callTool({ name: 'flaky__echo', arguments: { text: 'down' } });
      expect(down.isError).toBe(true);
      expect(text(down)).toMatch(/^server 'flaky' is unavailable \(\w+\)/);
      await flaky.start();
      await expect
        .poll(async () => text(await client.callTool({ name: 'flaky__echo', arguments: { text: 'back' } })))
        .toBe('back');
    } finally {
      await client.close();
      await local.close();
      await flaky.close();
    }
  });

  it('--hold bounds a call made the moment its server died (it still read ready), not the call timeout', async () => {
    const flaky = await startSdkExampleServer({ unknownSessionStatus: 404 });
    const local = await startGateway({
      // A long call timeout and a long backoff: only the hold can end the wait.
      servers: {
        flaky: {
          url: flaky.url,
          keepalive: false,
          requestTimeoutMs: 60_000,
          restart: { backoff: { initialMs: 60_000, maxMs: 60_000 }, waitingReconnectMs: 60_000 },
        },
      },
      holdMs: 300,
    });
    const client = await v1Client(local.http.url);
    try {
      expect(text(await client.callTool({ name: 'flaky__echo', arguments: { text: 'up' } }))).toBe('up');
      await flaky.stop();
      expect(local.gateway.supervisor.server('flaky').status().state).toBe('ready');
      const down = await client.callTool({ name: 'flaky__echo', arguments: { text: 'down' } });
      expect(down.isError).toBe(true);
      expect(text(down)).toMatch(/^server 'flaky' is unavailable \(\w+\)/);
    } finally {
      await client.close();
      await local.close();
      await flaky.close();
    }
  });

  it('a call held by the gateway hurries the reconnect like a library caller: answered once the server is back, not at the long backoff', async () => {
    const flaky = await startSdkExampleServer({ unknownSessionStatus: 404 });
    const local = await startGateway({
      // The long backoff (30 s) would outlast the hold; waiting callers cap it at 200 ms.
      servers: {
        flaky: {
          url: flaky.url,
          keepalive: false,
          restart: { backoff: { initialMs: 30_000, maxMs: 30_000 }, waitingReconnectMs: 200 },
        },
      },
      holdMs: 20_000,
    });
    const client = await v1Client(local.http.url);
    try {
      expect(text(await client.callTool({ name: 'flaky__echo', arguments: { text: 'up' } }))).toBe('up');
      await flaky.stop();
      const handle = local.gateway.supervisor.server('flaky');
      await handle.reconnect().catch(() => {});
      await expect.poll(() => handle.status().state).toBe('reconnecting');
      const held = client.callTool({ name: 'flaky__echo', arguments: { text: 'held' } }, undefined, {
        timeout: 30_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await flaky.start();
      expect(text(await held)).toBe('held');
    } finally {
      await client.close();
      await local.close();
      await flaky.close();
    }
  });

  it('removes the tools of a failed server (list_changed sent) and the status tool says why', async () => {
    const doomed = await startSdkExampleServer({ unknownSessionStatus: 404 });
    const local = await startGateway({
      servers: {
        doomed: {
          url: doomed.url,
          keepalive: false,
          restart: { maxRestarts: 0, withinMs: 60_000, backoff: { initialMs: 10, maxMs: 10, factor: 1, jitter: 0 } },
        },
        never: { url: await refusingUrl(), restart: { maxRestarts: 0, withinMs: 60_000 } },
      },
      statusTool: true,
    });
    const client = await v1Client(local.http.url);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('doomed__echo');
      await doomed.close();
      await local.gateway.supervisor
        .server('doomed')
        .reconnect()
        .catch(() => {});
      await expect.poll(() => local.gateway.supervisor.status().doomed!.state).toBe('failed');
      await expect.poll(() => changes).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['mcp_supervisor_status']);
      const status = JSON.parse(text(await client.callTool({ name: 'mcp_supervisor_status', arguments: {} })));
      expect(status.never.state).toBe('failed');
      expect(status.never.lastError).toBeTruthy();
    } finally {
      await client.close();
      await local.close();
    }
  });
});

/** fetch() may not set Host: a plain node:http request does (what a DNS-rebinding page's browser sends). */
function statusWithHost(url: string, host: string, body: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          host,
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

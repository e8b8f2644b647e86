/**
 * Against @modelcontextprotocol/server-everything (issue #5 item 4): tools (with progress,
 * sampling and elicitation), resources, prompts, logging — over every transport it offers that
 * this build supports: Streamable HTTP, legacy HTTP+SSE (a `/sse` URL) and stdio.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Progress, type ServerConfigInput, type ServerHandle, type LogMessage } from '../../src/index.js';
import { EVERYTHING_ENTRY, startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';

interface Mode {
  name: string;
  start(): Promise<{ config: ServerConfigInput; close(): Promise<void> }>;
}

const MODES: Mode[] = [
  {
    name: 'Streamable HTTP',
    start: async () => {
      const server: EverythingServer = await startEverythingServer('streamableHttp');
      return { config: { url: server.url }, close: () => server.close() };
    },
  },
  {
    name: 'legacy HTTP+SSE',
    start: async () => {
      const server: EverythingServer = await startEverythingServer('sse');
      return { config: { url: server.url }, close: () => server.close() };
    },
  },
  {
    name: 'stdio',
    start: async () => ({
      config: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] },
      close: async () => {},
    }),
  },
];

describe.each(MODES)('server-everything over $name', (mode) => {
  let handle: ServerHandle;
  let close: () => Promise<void>;
  const logs: LogMessage[] = [];
  const sampled: unknown[] = [];

  beforeAll(async () => {
    const started = await mode.start();
    close = () => started.close();
    handle = await connect(started.config, {
      name: 'everything',
      handlers: {
        sampling: (params) => {
          sampled.push(params);
          return {
            role: 'assistant',
            content: { type: 'text', text: 'sampled answer' },
            model: 'test-model',
            stopReason: 'endTurn',
          };
        },
        elicitation: () => ({ action: 'accept', content: {} }),
      },
      elicitation: { applyDefaults: true },
    });
    handle.on('log', (log) => logs.push(log));
  }, 30_000);

  afterAll(async () => {
    await handle?.close();
    await close?.();
  });

  it('lists and calls tools', async () => {
    const { tools } = await handle.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'echo',
        'get-sum',
        'trigger-long-running-operation',
        'trigger-sampling-request',
        'trigger-elicitation-request',
      ]),
    );
    expect((await handle.callTool('echo', { message: 'hello' })).content[0]?.text).toContain('hello');
    expect(JSON.stringify((await handle.callTool('get-sum', { a: 2, b: 40 })).content)).toContain('42');
  });

  it('runs the long-running tool with progress notifications', async () => {
    const progress: Progress[] = [];
    const result = await handle.callTool(
      'trigger-long-running-operation',
      { duration: 0.2, steps: 4 },
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    );
    expect(result.content.length).toBeGreaterThan(0);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
  });

  it('answers the sampling request the server sends while a tool runs', async () => {
    const result = await handle.callTool('trigger-sampling-request', { prompt: 'say hi', maxTokens: 10 });
    expect(sampled.length).toBeGreaterThan(0);
    expect(JSON.stringify(result.content)).toContain('sampled answer');
  });

  it('answers the elicitation request with the schema defaults filled in', async () => {
    const result = await handle.callTool('trigger-elicitation-request', {});
    expect(JSON.stringify(result.content)).toMatch(/accept/i);
  });

  it('lists and reads resources, lists and gets prompts', async () => {
    const { resources } = await handle.request<{ resources: Array<{ uri: string }> }>('resources/list');
    expect(resources.length).toBeGreaterThan(0);
    const read = await handle.request<{ contents: Array<{ uri: string }> }>('resources/read', {
      uri: resources[0]!.uri,
    });
    expect(read.contents[0]?.uri).toBe(resources[0]!.uri);
    const { prompts } = await handle.request<{ prompts: Array<{ name: string }> }>('prompts/list');
    expect(prompts.map((p) => p.name)).toContain('simple-prompt');
    const prompt = await handle.request<{ messages: unknown[] }>('prompts/get', { name: 'simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
  });

  it('sets the logging level and receives log messages', async () => {
    await handle.request('logging/setLevel', { level: 'debug' });
    const first = new Promise<LogMessage>((resolve) => handle.on('log', resolve));
    await handle.callTool('toggle-simulated-logging', {});
    const log = await first;
    expect(typeof log.level).toBe('string');
    expect(logs.length).toBeGreaterThan(0);
    await handle.callTool('toggle-simulated-logging', {});
  });
});

/**
 * `mcp-supervisor/ai-sdk` with the real `ai` package: generateText with the AI SDK's mock
 * language model calls MCP tools end to end, through a server restart, an `isError` result and
 * an abort. The normal suite runs it with AI SDK 6 (Node 20); `npm run test:ai7` runs this same
 * file with AI SDK 7 under a Node 22 from the registry (vitest.ai7.config.ts maps `ai` to `ai-v7`).
 */
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import * as aiTest from 'ai/test';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkTools } from '../../src/adapters/ai-sdk/index.js';
import { ToolResultError } from '../../src/index.js';
import { startWorld, until, type AdapterWorld } from './servers.js';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

function toolCalls(...calls: [name: string, input: object][]): GenerateResult {
  return {
    content: calls.map(([toolName, input], index) => ({
      type: 'tool-call' as const,
      toolCallId: `call-${toolName}-${index}`,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage,
    warnings: [],
  };
}

function text(value: string): GenerateResult {
  return {
    content: [{ type: 'text', text: value }],
    finishReason: { unified: 'stop', raw: undefined },
    usage,
    warnings: [],
  };
}

let world: AdapterWorld;
beforeAll(async () => {
  world = await startWorld();
}, 30_000);
afterAll(() => world.close());

describe('mcp-supervisor/ai-sdk', () => {
  it('runs under the AI SDK major this run is for', () => {
    expect('MockLanguageModelV4' in aiTest ? 7 : 6).toBe(Number(process.env.AI_SDK_MAJOR ?? 6));
  });

  it('gives a ToolSet under exposed names, with the MCP input schemas', async () => {
    const tools = await aiSdkTools(world.sup);
    expect(Object.keys(tools)).toContain('everything__get-sum');
    expect(Object.keys(tools)).toContain('example__lookup');
    expect(Object.keys(tools)).not.toContain('everything__toggle-simulated-logging');
    expect(Object.keys(await aiSdkTools(world.sup, { servers: ['example'] })).sort()).toEqual([
      'example__echo',
      'example__increment',
      'example__lookup',
      'example__upsert',
    ]);
  });

  it('generateText calls MCP tools end to end: text, images, structured content, a restart, isError', async () => {
    const prompts: ModelMessage[][] = [];
    const steps = [
      toolCalls(
        ['everything__get-sum', { a: 2, b: 3 }],
        ['everything__get-tiny-image', {}],
        ['everything__get-structured-content', { location: 'Chicago' }],
      ),
      // Before this step the example server restarts: every session is gone.
      toolCalls(['example__lookup', { key: 'k' }]),
      toolCalls(['tools__fail', {}]),
      text('done'),
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(options.prompt);
        if (prompts.length === 2) await world.example.restart();
        return steps[prompts.length - 1]!;
      },
    });
    const result = await generateText({
      model,
      tools: await aiSdkTools(world.sup),
      prompt: 'use the tools',
      stopWhen: stepCountIs(6),
    });
    expect(result.text).toBe('done');
    const [first, second, third] = result.steps;
    const outputs = first!.toolResults.map((part) => part.output as { content: { type: string; text?: string }[] });
    expect(outputs[0]!.content[0]!.text).toMatch(/5/);
    expect(outputs[1]!.content.map((part) => part.type)).toContain('image');
    expect((first!.toolResults[2]!.output as { structuredContent?: object }).structuredContent).toHaveProperty(
      'temperature',
    );
    // The model saw the image as data, not as a JSON dump.
    const seen = JSON.stringify(prompts[1]);
    expect(seen).toMatch(/"type":"(image-data|file-data|file)"/);
    expect(seen).toContain('iVBORw0KGgo');
    // The call after the restart was served on a new session.
    expect((second!.toolResults[0]!.output as { content: { text: string }[] }).content[0]!.text).toBe('no k');
    expect(world.example.executions().lookup).toBe(1);
    // isError took the AI SDK's tool-error path, and the model was told.
    const error = third!.content.find((part) => part.type === 'tool-error');
    expect(error?.error).toBeInstanceOf(ToolResultError);
    expect(JSON.stringify(prompts[3])).toContain('the disk is full');
  });

  it("the AI SDK's abort signal cancels the call on the server", async () => {
    const controller = new AbortController();
    const model = new MockLanguageModelV3({ doGenerate: async () => toolCalls(['tools__wait', {}]) });
    const run = generateText({
      model,
      tools: await aiSdkTools(world.sup),
      prompt: 'wait',
      abortSignal: controller.signal,
    });
    await until(() => world.tools.calls.includes('wait()'));
    controller.abort();
    // The run ends either way: rejected, or with the aborted call as its tool error.
    const outcome = await run.then(
      (result) => result.steps[0]?.content.find((part) => part.type === 'tool-error')?.error,
      (error: unknown) => error,
    );
    expect(String(outcome)).toMatch(/abort/i);
    await until(() => world.tools.cancelled.includes('wait'));
  });
});

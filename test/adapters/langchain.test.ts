/**
 * `mcp-supervisor/langchain` with the real @langchain/core: tools invoked through `invoke`, as
 * an agent's ToolNode does (a tool call in, a ToolMessage out), against real MCP servers,
 * through a server restart, an `isError` result and an abort.
 */
import type { ToolMessage } from '@langchain/core/messages';
import { ToolInputParsingException, type DynamicStructuredTool } from '@langchain/core/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { langChainTools } from '../../src/adapters/langchain/index.js';
import { ToolResultError, type CallToolResult } from '../../src/index.js';
import { startWorld, until, type AdapterWorld } from './servers.js';

let world: AdapterWorld;
beforeAll(async () => {
  world = await startWorld();
}, 30_000);
afterAll(() => world.close());

async function toolNamed(name: string): Promise<DynamicStructuredTool> {
  const tool = (await langChainTools(world.sup)).find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

function call(name: string, args: Record<string, unknown>) {
  return { name, args, id: `call-${name}`, type: 'tool_call' as const };
}

describe('mcp-supervisor/langchain', () => {
  it('gives StructuredTools under exposed names, with the MCP input schemas', async () => {
    const tools = await langChainTools(world.sup, { servers: ['example'] });
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'example__echo',
      'example__increment',
      'example__lookup',
      'example__upsert',
    ]);
    expect(tools.find((tool) => tool.name === 'example__lookup')!.schema).toMatchObject({
      type: 'object',
      required: ['key'],
    });
  });

  it('invoke with a tool call gives a ToolMessage: text content, the MCP result as artifact', async () => {
    const sum = await toolNamed('everything__get-sum');
    const message = (await sum.invoke(call(sum.name, { a: 2, b: 3 }))) as ToolMessage;
    expect(message.tool_call_id).toBe('call-everything__get-sum');
    expect(message.content).toMatch(/5/);
    const structured = await toolNamed('everything__get-structured-content');
    const weather = (await structured.invoke(call(structured.name, { location: 'Chicago' }))) as ToolMessage;
    expect((weather.artifact as CallToolResult).structuredContent).toHaveProperty('humidity');
  });

  it('images become content blocks', async () => {
    const image = await toolNamed('everything__get-tiny-image');
    const message = (await image.invoke(call(image.name, {}))) as ToolMessage;
    expect(message.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'image', mimeType: 'image/png' })]),
    );
  });

  it('a call after the server restarted is served on a new session', async () => {
    const lookup = await toolNamed('example__lookup');
    await world.example.restart();
    const message = (await lookup.invoke(call(lookup.name, { key: 'k' }))) as ToolMessage;
    expect(message.content).toBe('no k');
  });

  it('arguments are checked against the JSON Schema before any call', async () => {
    const lookup = await toolNamed('example__lookup');
    await expect(lookup.invoke({ key: 3 } as never)).rejects.toBeInstanceOf(ToolInputParsingException);
  });

  it('isError throws ToolResultError with the result', async () => {
    const fail = await toolNamed('tools__fail');
    const error = (await fail.invoke(call(fail.name, {})).catch((caught: unknown) => caught)) as ToolResultError;
    expect(error).toBeInstanceOf(ToolResultError);
    expect(error.message).toContain('the disk is full');
    expect(error.result.isError).toBe(true);
  });

  it("the run's signal cancels the call on the server", async () => {
    const wait = await toolNamed('tools__wait');
    const controller = new AbortController();
    const run = wait.invoke(call(wait.name, {}), { signal: controller.signal });
    await until(() => world.tools.calls.includes('wait()'));
    controller.abort();
    await expect(run).rejects.toThrow(/abort/i);
    await until(() => world.tools.cancelled.includes('wait'));
  });
});

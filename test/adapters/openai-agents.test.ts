/**
 * `mcp-supervisor/openai-agents` with the real @openai/agents: an Agent with our MCPServer runs
 * with a fake Model (scripted tool calls, no network) against real MCP servers, through a
 * server restart, an `isError` result, a tool list that changes, the tool filter and an abort.
 */
import {
  Agent,
  Runner,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiAgentsMcpServer } from '../../src/adapters/openai-agents/index.js';
import { startWorld, until, type AdapterWorld } from './servers.js';

type Step = [name: string, args: object][] | string;

/** A Model that answers with scripted steps: tool calls, then a final text. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(
    private readonly steps: Step[],
    private readonly beforeStep: (index: number) => Promise<void> = async () => {},
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const index = this.requests.length - 1;
    await this.beforeStep(index);
    const step = this.steps[index] ?? 'done';
    const output: AgentInputItem[] =
      typeof step === 'string'
        ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step }] }]
        : step.map(([name, args], call) => ({
            type: 'function_call',
            callId: `call-${index}-${call}`,
            name,
            arguments: JSON.stringify(args),
            status: 'completed',
          }));
    return { usage: new Usage(), output: output };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('not streamed');
  }

  toolNames(request: number): string[] {
    return this.requests[request]!.tools.map((tool) => tool.name).sort();
  }

  inputOf(request: number): string {
    return JSON.stringify(this.requests[request]!.input);
  }
}

const runner = new Runner({ tracingDisabled: true });
let world: AdapterWorld;
beforeAll(async () => {
  world = await startWorld();
}, 30_000);
afterAll(() => world.close());

describe('mcp-supervisor/openai-agents', () => {
  it('an Agent run calls MCP tools through a restart; isError reaches the model as an error', async () => {
    const model = new ScriptedModel(
      // The Agents SDK shows function names with `_` for `-`; it calls our server with the exposed name.
      [[['everything__get_sum', { a: 2, b: 3 }]], [['example__lookup', { key: 'k' }]], [['tools__fail', {}]], 'done'],
      async (index) => {
        if (index === 1) await world.example.restart();
      },
    );
    const server = openAiAgentsMcpServer(world.sup);
    const agent = new Agent({ name: 'assistant', instructions: 'use the tools', model, mcpServers: [server] });
    const result = await runner.run(agent, 'go');
    expect(result.finalOutput).toBe('done');
    expect(model.toolNames(0)).toContain('everything__get_sum');
    expect(model.inputOf(1)).toContain('The sum of 2 and 3 is 5.');
    expect(model.inputOf(2)).toContain('no k');
    expect(model.inputOf(3)).toContain('the disk is full');
    await server.close();
  });

  it('applies the tool filter, and follows a tool list that changed (cacheToolsList)', async () => {
    const server = openAiAgentsMcpServer(world.sup, {
      name: 'tools-only',
      toolFilter: { blockedToolNames: ['tools__wait'] },
      servers: ['tools'],
    });
    const agent = new Agent({ name: 'assistant', model: new ScriptedModel(['one']), mcpServers: [server] });
    const first = new ScriptedModel(['one']);
    await runner.run(agent.clone({ model: first }), 'go');
    expect(first.toolNames(0)).toEqual(['tools__fail']);
    const changed = new Promise<void>((resolve) => {
      const off = world.sup.catalog.on('changed', () => {
        if (!world.sup.catalog.tool('tools__fresh')) return;
        off();
        resolve();
      });
    });
    world.tools.setTools([
      { name: 'fail', result: () => ({ content: [{ type: 'text', text: 'the disk is full' }], isError: true }) },
      { name: 'wait', hang: true },
      { name: 'fresh' },
    ]);
    await changed;
    const second = new ScriptedModel(['two']);
    await runner.run(agent.clone({ model: second }), 'go');
    expect(second.toolNames(0)).toEqual(['tools__fail', 'tools__fresh']);
    await server.close();
  });

  it("the run's signal cancels the call on the server", async () => {
    const server = openAiAgentsMcpServer(world.sup);
    const agent = new Agent({
      name: 'assistant',
      model: new ScriptedModel([[['tools__wait', {}]]]),
      mcpServers: [server],
    });
    const controller = new AbortController();
    const run = runner.run(agent, 'go', { signal: controller.signal });
    await until(() => world.tools.calls.includes('wait()'));
    controller.abort();
    await run.catch(() => undefined);
    await until(() => world.tools.cancelled.includes('wait'));
    await server.close();
  });
});

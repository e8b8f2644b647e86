/**
 * Use it in your agent: the OpenAI Agents SDK. The supervisor's catalog is one MCP server for
 * `new Agent({ mcpServers })`, with the Agents SDK's tool filter and tool cache. Run it against
 * server-everything on port 3001: `npx tsx examples/agent-openai-agents.ts`.
 */
import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { createSupervisor } from 'mcp-supervisor';
import { openAiAgentsMcpServer } from 'mcp-supervisor/openai-agents';

const sup = createSupervisor({
  servers: { everything: { url: process.env.EVERYTHING_URL ?? 'http://127.0.0.1:3001/mcp' } },
});
await sup.start();

// A scripted model so that this runs offline; use yours, e.g. model: 'gpt-4.1'.
class ScriptedModel implements Model {
  private turn = 0;
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    if (this.turn++ === 0) {
      // The Agents SDK shows the model `everything__get_sum` (it replaces `-` with `_`).
      const name = request.tools.find((tool) => tool.name.endsWith('get_sum'))!.name;
      return {
        usage: new Usage(),
        output: [{ type: 'function_call', callId: '1', name, arguments: '{"a":2,"b":3}', status: 'completed' }],
      };
    }
    console.log(`the model saw: ${JSON.stringify(request.input.at(-1))}`);
    return {
      usage: new Usage(),
      output: [
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] },
      ],
    };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this example');
  }
}

const mcp = openAiAgentsMcpServer(sup, { toolFilter: { blockedToolNames: ['everything__get-env'] } });
const agent = new Agent({
  name: 'assistant',
  instructions: 'Use the tools.',
  model: new ScriptedModel(),
  mcpServers: [mcp],
});
const result = await new Runner({ tracingDisabled: true }).run(agent, 'What is 2 + 3?');
console.log(`model: ${result.finalOutput}`);
await mcp.close();
await sup.stop();

/**
 * Use it in your agent: the Vercel AI SDK. Every MCP server's tools as one ToolSet, fresh on
 * every turn. Run it against server-everything (`npx @modelcontextprotocol/server-everything
 * streamableHttp`, port 3001): `npx tsx examples/agent-ai-sdk.ts`.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createSupervisor } from 'mcp-supervisor';
import { aiSdkTools } from 'mcp-supervisor/ai-sdk';

const sup = createSupervisor({
  servers: { everything: { url: process.env.EVERYTHING_URL ?? 'http://127.0.0.1:3001/mcp' } },
});
await sup.start();

// A scripted model so that this runs offline; use yours, e.g. openai('gpt-4.1').
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
let turn = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () =>
    turn++ === 0
      ? {
          content: [{ type: 'tool-call', toolCallId: '1', toolName: 'everything__get-sum', input: '{"a":2,"b":3}' }],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        }
      : {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        },
});

const result = await generateText({
  model,
  tools: await aiSdkTools(sup), // call it every turn: cached, and fresh after any change
  prompt: 'What is 2 + 3?',
  stopWhen: stepCountIs(5),
});
const [call] = result.steps[0]!.toolResults;
console.log(`${call!.toolName} -> ${JSON.stringify(call!.output)}`);
console.log(`model: ${result.text}`);
await sup.stop();

/**
 * Use it in your agent: LangChain. Every MCP server's tools as StructuredTools; a model's tool
 * calls go to `tool.invoke(toolCall)`, which answers with a ToolMessage (what a ToolNode does).
 * Run it against server-everything on port 3001: `npx tsx examples/agent-langchain.ts`.
 */
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { createSupervisor } from 'mcp-supervisor';
import { langChainTools } from 'mcp-supervisor/langchain';

const sup = createSupervisor({
  servers: { everything: { url: process.env.EVERYTHING_URL ?? 'http://127.0.0.1:3001/mcp' } },
});
await sup.start();

const tools = await langChainTools(sup); // call it every turn: cached, and fresh after any change
// With a real model: `const ai = await model.bindTools(tools).invoke(messages)`. Here, its answer:
const ai = new AIMessage({
  content: '',
  tool_calls: [{ id: '1', name: 'everything__get-sum', args: { a: 2, b: 3 }, type: 'tool_call' }],
});
for (const call of ai.tool_calls ?? []) {
  const tool = tools.find((candidate) => candidate.name === call.name);
  // A ToolNode turns a failed call into an error ToolMessage; called directly, `invoke` throws
  // (a tool that answered `isError: true` throws ToolResultError): answer the model the same way.
  const message = (await tool!
    .invoke(call)
    .catch(
      (error: Error) => new ToolMessage({ content: error.message, tool_call_id: call.id!, status: 'error' }),
    )) as ToolMessage;
  console.log(`${call.name} -> ${JSON.stringify(message.content)}`);
}
await sup.stop();

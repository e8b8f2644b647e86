/**
 * The client under test for the official conformance suite (@modelcontextprotocol/conformance).
 * The suite runs `npm run -s conformance:client -- <server url>` with MCP_CONFORMANCE_SCENARIO
 * set, and passes when every check succeeds and this process exits 0.
 */
import { connect, type ServerHandle } from '../../src/index.js';
import { authOptionsFor } from './auth-options.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const log = (line: string) => process.stderr.write(`[conformance-client] ${line}\n`);

/** What each scenario needs from a client, beyond connecting and closing. */
const scenarios: Record<string, (server: ServerHandle) => Promise<void>> = {
  initialize: async () => {},
  tools_call: async (server) => {
    await server.listTools();
    const result = await server.callTool('add_numbers', { a: 5, b: 3 });
    log(`add_numbers -> ${JSON.stringify(result.content)}`);
  },
  'elicitation-sep1034-client-defaults': async (server) => {
    const result = await server.callTool('test_client_elicitation_defaults', {});
    log(`elicitation tool -> ${JSON.stringify(result.content)}`);
  },
  'sse-retry': async (server) => {
    const result = await server.callTool('test_reconnection', {});
    log(`test_reconnection -> ${JSON.stringify(result.content)}`);
  },
  // SEP-2243: the calls the scenario asks for (its context), after a list that teaches the x-mcp-header parameters.
  'http-custom-headers': async (server) => {
    await server.listTools();
    const { toolCalls = [] } = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
      toolCalls?: { name: string; arguments: Record<string, unknown> }[];
    };
    for (const call of toolCalls) await server.callTool(call.name, call.arguments);
  },
  // Every tool the list kept (the invalid ones are left out), called with placeholder arguments.
  'http-invalid-tool-headers': async (server) => {
    const { tools } = await server.listTools();
    log(`kept: ${tools.map((t) => t.name).join(', ')}; rejected: ${server.rejectedTools().length}`);
    for (const tool of tools) await server.callTool(tool.name, placeholderArguments(tool.inputSchema));
  },
  'http-standard-headers': async (server) => {
    const { tools } = await server.listTools();
    for (const tool of tools) await server.callTool(tool.name, {});
    const { resources } = await server.listResources();
    for (const resource of resources) await server.readResource(resource.uri);
    const { prompts } = await server.listPrompts();
    for (const prompt of prompts) await server.getPrompt(prompt.name);
  },
  // The focal tool's inputSchema, handed back verbatim: the scenario checks nothing was lost.
  'json-schema-2020-12-preservation': async (server) => {
    const { tools } = await server.listTools();
    const focal = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    if (!focal) throw new Error('json_schema_2020_12_tool not listed');
    await server.callTool('json_schema_echo', { schema: focal.inputSchema });
  },
};

/** A string for every string property, so that a tool with required parameters can be called. */
function placeholderArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, { type?: unknown }>))
    if (property?.type === 'string') args[key] = 'us-west1';
  return args;
}

/** Every `auth/*` scenario: list the tools, then call the one that may need more scope. */
async function authorizedCalls(server: ServerHandle): Promise<void> {
  const { tools } = await server.listTools();
  log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  const result = await server.callTool('test-tool', {});
  log(`test-tool -> ${JSON.stringify(result.content)}`);
}

async function main(): Promise<void> {
  if (!url || !/^https?:\/\//.test(url))
    throw new Error(`usage: conformance client <server url> (got ${JSON.stringify(url)})`);
  log(`scenario ${scenario || '(none)'} against ${url}`);
  const server = await connect(
    {
      url,
      requestTimeoutMs: 20_000,
      keepalive: false,
      ...(scenario.startsWith('auth/') ? { auth: authOptionsFor(scenario, process.env.MCP_CONFORMANCE_CONTEXT) } : {}),
    },
    {
      name: 'conformance',
      clientInfo: { name: 'mcp-supervisor-conformance', version: '1.0.0' },
      // An accepting user who leaves every field alone: SEP-1034 defaults fill the form.
      handlers: { elicitation: () => ({ action: 'accept', content: {} }) },
      elicitation: { applyDefaults: true },
    },
  );
  server.on('transition', (e) => log(`${e.from} -> ${e.to} (${e.cause}${e.error ? `: ${e.error}` : ''})`));
  try {
    const run =
      scenarios[scenario] ??
      (scenario.startsWith('auth/') ? authorizedCalls : undefined) ??
      (async (s: ServerHandle) => void (await s.listTools().catch(() => undefined)));
    await run(server);
  } finally {
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);

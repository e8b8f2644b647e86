/**
 * The client under test for the official conformance suite (@modelcontextprotocol/conformance).
 * The suite runs `<client> <server url>` with MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
 * MCP_CONFORMANCE_CONTEXT) set, and passes when every check succeeds and this process exits 0.
 * Only the public API (src/index.ts) is used: each case is what an agent would do.
 */
import { connect, type ClientHandlers, type ServerHandle } from '../../src/index.js';
import { authOptionsFor } from './auth-options.js';
import { listSkills, loadSkill } from './skills.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
};
const log = (line: string) => process.stderr.write(`[conformance-client] ${line}\n`);

async function call(server: ServerHandle, name: string, args: Record<string, unknown> = {}): Promise<void> {
  const result = await server.callTool(name, args);
  log(`${name} -> ${JSON.stringify(result.content)}`);
}

/** What each scenario needs from a client, beyond connecting and closing. */
const scenarios: Record<string, (server: ServerHandle) => Promise<void>> = {
  initialize: async () => {},
  tools_call: async (server) => {
    await server.listTools();
    await call(server, 'add_numbers', { a: 5, b: 3 });
  },
  'elicitation-sep1034-client-defaults': (server) => call(server, 'test_client_elicitation_defaults'),
  'sse-retry': (server) => call(server, 'test_reconnection'),
  'request-metadata': async (server) => {
    await server.listTools();
    await server.callTool('any', {});
  },
  // MRTR (SEP-2322): the two MRTR tools answered through the elicitation handler, an unrelated
  // call made while they are between rounds, and a result without `resultType`.
  'sep-2322-client-request-state': async (server) => {
    await server.listTools();
    await Promise.all([
      call(server, 'test_mrtr_echo_state'),
      call(server, 'test_mrtr_no_state'),
      call(server, 'test_mrtr_unrelated'),
    ]);
    await call(server, 'test_mrtr_no_result_type');
  },
  // Mcp-Method on every request, Mcp-Name on tools/call, resources/read and prompts/get.
  'http-standard-headers': async (server) => {
    const { tools } = await server.listTools();
    for (const tool of tools) await call(server, tool.name);
    const { resources } = await server.listResources();
    for (const resource of resources) await server.readResource(resource.uri);
    const { prompts } = await server.listPrompts();
    for (const prompt of prompts) await server.getPrompt(prompt.name);
  },
  // The calls the scenario names in its context (x-mcp-header parameters mirrored as Mcp-Param-*).
  'http-custom-headers': async (server) => {
    await server.listTools();
    for (const { name, arguments: args } of context.toolCalls ?? []) await call(server, name, args);
  },
  // One valid tool among tools with invalid x-mcp-header annotations. Like an agent, call every
  // tool the runtime offers: an invalid one must be left out of the listing or refused by
  // callTool, never sent; the valid one must stay usable.
  'http-invalid-tool-headers': async (server) => {
    const { tools } = await server.listTools();
    log(`tools: ${tools.map((t) => t.name).join(', ')}`);
    for (const tool of tools)
      await call(server, tool.name, argumentsFor(tool.inputSchema)).catch((error: unknown) =>
        log(`${tool.name} refused: ${error instanceof Error ? error.message : String(error)}`),
      );
  },
  // The focal tool's inputSchema, as the client holds it, echoed back verbatim.
  'json-schema-2020-12-preservation': async (server) => {
    const { tools } = await server.listTools();
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    if (!focal) throw new Error('json_schema_2020_12_tool is not listed');
    await call(server, 'json_schema_echo', { schema: focal.inputSchema });
  },
  'sep-2640-client-no-prefetch': async (server) => {
    log(`skills: ${(await listSkills(server)).map((s) => s.uri).join(', ')}`);
  },
  'sep-2640-client-verify-digest': loadEverySkill,
  'sep-2640-client-verify-size': loadEverySkill,
  'sep-2640-client-verify-frontmatter': loadEverySkill,
};

/** A value of the declared type for each required property. */
function argumentsFor(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const sample: Record<string, unknown> = { string: 'x', integer: 1, number: 1, boolean: true, object: {}, array: [] };
  return Object.fromEntries(required.map((key) => [key, sample[properties[key]?.type ?? ''] ?? null]));
}

async function loadEverySkill(server: ServerHandle): Promise<void> {
  for (const skill of await listSkills(server)) await loadSkill(server, skill);
}

/** Every `auth/*` scenario: list the tools, then call the one that may need more scope. */
async function authorizedCalls(server: ServerHandle): Promise<void> {
  const { tools } = await server.listTools();
  log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  await call(server, 'test-tool');
}

/** An accepting user: SEP-1034 defaults fill the fields left alone; MRTR's confirmation is given. */
const handlers: ClientHandlers = {
  elicitation: () => ({ action: 'accept', content: scenario.startsWith('sep-2322') ? { confirmed: true } : {} }),
  ...(scenario === 'request-metadata'
    ? {
        roots: () => ({ roots: [] }),
        sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'none' }),
      }
    : {}),
};

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
      handlers,
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

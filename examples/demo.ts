/**
 * `npm start`: a self-contained demo. It starts a local MCP server (built with the official SDK,
 * the same one the tests use), supervises it, prints every lifecycle transition and a tool
 * result, then makes the server forget every session to show the connection healing itself.
 */
import { createSupervisor } from '../src/index.js';
import { startSdkServer } from '../servers/sdk-servers.js';

const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 23)}  ${line}`);

const server = await startSdkServer({ stateful: true });
log(`demo MCP server listening at ${server.url}`);

const supervisor = createSupervisor({
  servers: { demo: { url: server.url } },
  clientInfo: { name: 'mcp-supervisor-demo', version: '1.0.0' },
});
supervisor.on('transition', (e) =>
  log(`[${e.server}] ${e.from ?? '(start)'} -> ${e.to}   (${e.cause}${e.error ? `: ${e.error}` : ''})`),
);

await supervisor.start();
const demo = supervisor.server('demo');
const { tools } = await demo.listTools();
log(`tools: ${tools.map((t) => t.name).join(', ')}`);
const sum = await demo.callTool('add', { a: 2, b: 3 });
log(`add(2, 3) -> ${JSON.stringify(sum.content)}`);

log('the server now forgets every session (as after a restart); the next calls get HTTP 404 ...');
await server.terminateAllSessions();
const [echo, again] = await Promise.all([
  demo.callTool('echo', { text: 'still here' }),
  demo.callTool('add', { a: 40, b: 2 }),
]);
log(`echo -> ${JSON.stringify(echo.content)}, add(40, 2) -> ${JSON.stringify(again.content)}`);

const { sessionId, state, protocolVersion, restarts } = demo.status();
log(`status: state=${state} protocolVersion=${protocolVersion} sessionId=${sessionId} restarts=${restarts}`);

await supervisor.stop();
await server.close();
log('stopped cleanly');

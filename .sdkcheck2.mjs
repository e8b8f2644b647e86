import { startServer } from '/work/wt-gwf/.bench-build/bench/measure.js';
import { createGateway } from '/work/wt-gwf/.bench-build/src/gateway/gateway.js';
import { serveGatewayHttp } from '/work/wt-gwf/.bench-build/src/gateway/http.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
process.on('warning', () => {});
const upstream = await startServer('json');
const gateway = createGateway({ servers: { bench: { url: upstream.url, keepalive: false } }, catalog: { prefix: false } });
await gateway.start();
const http = await serveGatewayHttp(gateway, { token: 't' });
const mk = async (url, h) => { const c = new Client({ name: 'bench', version: '1.0.0' }); await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: h } })); return c; };
const clients = { direct: await mk(upstream.url, {}), gw: await mk(http.url, { authorization: 'Bearer t' }) };
const lat = { direct: [], gw: [] };
for (let r = 0; r < 10; r++) for (const k of Object.keys(clients)) for (let i = 0; i < 200; i++) { const s = performance.now(); await clients[k].callTool({ name: 'echo', arguments: {} }); lat[k].push(performance.now() - s); }
for (const k of Object.keys(lat)) { const a = lat[k].sort((x,y)=>x-y); console.log(k, Math.round(a[a.length>>1]*1000), 'p90', Math.round(a[Math.floor(a.length*0.9)]*1000)); }
for (const c of Object.values(clients)) await c.close(); await http.close(); await gateway.close(); upstream.child.kill(); process.exit(0);

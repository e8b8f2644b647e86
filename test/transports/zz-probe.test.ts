import { it, expect, afterEach } from 'vitest';
import { connect, createSupervisor } from '../../src/index.js';
import { Cleanup, fixture, open, rejection, gets, posts, cancellations, settle, until, requestPosts } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

it('response on GET', async () => {
  const f = await fixture(cleanup);
  const { handle } = await open(cleanup, f.url);
  f.faults.delayMs = 300;
  const p = handle.callTool('echo', { text: 'post' });
  await until(() => posts(f.requests, 'tools/call').length === 1);
  const id = posts(f.requests, 'tools/call')[0]!.body.id;
  f.push({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'from GET' }] } });
  console.log('GET resp', await p);
  f.faults.delayMs = 0;
  await settle(400);
  console.log(await handle.callTool('echo', { text: 'after' }));
});
it('per stream', async () => {
  const f = await fixture(cleanup, { responseMode: 'sse' });
  const { handle } = await open(cleanup, f.url);
  f.faults.sseEndWithoutResponse = 'with-id';
  f.faults.retryMs = 20;
  console.log(await handle.callTool('echo', { text: 'a' }));
  f.closeGetStreams();
  await until(() => gets(f.requests).length === 3);
  console.log(gets(f.requests).map(g => g.headers['last-event-id']), f.getStreamCount());
});
it('resume 405', async () => {
  const f = await fixture(cleanup, { responseMode: 'sse' });
  const { handle } = await open(cleanup, f.url);
  f.faults.sseEndWithoutResponse = 'with-id';
  f.faults.retryMs = 20;
  f.faults.getMode = 405;
  const e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('405', e.name, e.message);
});
it('resume leak', async () => {
  const f = await fixture(cleanup, { responseMode: 'sse' });
  const { handle } = await open(cleanup, f.url);
  // a resume whose response never comes: first ends with id; fixture pendingResumes maps it; the tool 'slow' sleeps
  f.faults.sseEndWithoutResponse = 'with-id';
  f.faults.retryMs = 10;
  const t = Date.now();
  const e = await rejection(handle.callTool('slow', { ms: 3000 }, { timeoutMs: 300 }));
  console.log('leak', Date.now() - t, e.name, f.getStreamCount());
  await settle(200);
  console.log('streams after', f.getStreamCount());
});
it('re-init', async () => {
  const f = await fixture(cleanup);
  const { handle, transitions } = await open(cleanup, f.url);
  f.expireAllSessions();
  const r = await Promise.all([1, 2, 3].map((i) => handle.callTool('echo', { text: String(i) })));
  console.log(r.map(x => x.content[0]!.text), posts(f.requests, 'initialize').length, requestPosts(f.requests).map(p => [p.body.id, p.rpcMethod, p.headers['mcp-session-id']?.toString().slice(0,10)]));
  console.log(transitions.map(t => `${t.from}->${t.to} ${t.cause}`));
});
it('re-init fails', async () => {
  const f = await fixture(cleanup);
  const { handle, transitions } = await open(cleanup, f.url);
  f.expireAllSessions();
  f.faults.notFoundOnInitialize = true;
  const t = Date.now();
  const e = await rejection(handle.callTool('echo', { text: 'x' }));
  console.log('reinit fail', Date.now() - t, e.name, e.message, posts(f.requests, 'initialize').length);
  console.log(transitions.map(t => `${t.from}->${t.to} ${t.cause}`));
});
it('held during init', async () => {
  const f = await fixture(cleanup);
  f.faults.delayMs = 200;
  const sup = createSupervisor({ servers: { a: { url: f.url } } });
  const started = sup.start();
  const p = sup.server('a').callTool('echo', { text: 'early' });
  await started;
  console.log(await p, f.requests.map(r => r.method + ' ' + r.rpcMethod));
  await sup.stop();
});

import { it, expect, afterEach } from 'vitest';
import { connect } from '../../src/index.js';
import { Cleanup, fixture, open, rejection, gets, posts, cancellations, settle } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

it('invalid session', async () => {
  const f = await fixture(cleanup);
  f.faults.invalidSessionIdOnce = true;
  const e = await rejection(connect({ url: f.url }, { name: 'x' }));
  console.log('invalid', e.name, e.message);
});
it('unsupported', async () => {
  const f = await fixture(cleanup, { protocolVersion: '1999-01-01' });
  const e = await rejection(connect({ url: f.url }, { name: 'x' }));
  console.log('unsupported', e.name, e.message, f.requests.map(r => r.method + ' ' + r.rpcMethod));
});
it('without-id', async () => {
  const f = await fixture(cleanup, { responseMode: 'sse' });
  const { handle } = await open(cleanup, f.url);
  f.faults.sseEndWithoutResponse = 'without-id';
  const t = Date.now();
  const e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('without-id', Date.now() - t, e.name, e.message);
  console.log(await handle.callTool('echo', { text: 'b' }));
});
it('with-id', async () => {
  const f = await fixture(cleanup, { responseMode: 'sse' });
  const { handle } = await open(cleanup, f.url);
  f.faults.sseEndWithoutResponse = 'with-id';
  f.faults.retryMs = 50;
  const t = Date.now();
  const r = await handle.callTool('echo', { text: 'a' });
  console.log('with-id', Date.now() - t, r, gets(f.requests).map(g => g.headers['last-event-id']));
});
it('bad inputs', async () => {
  const f = await fixture(cleanup);
  const { handle } = await open(cleanup, f.url, { maxMessageBytes: 10000 });
  f.faults.garbleNextBody = true;
  let e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('garble', e.name, e.message);
  f.faults.wrongContentTypeOnce = true;
  e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('ctype', e.name, e.message);
  f.faults.hugeBodyBytes = 20000;
  e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('huge', e.name, e.message);
  f.faults.fail500Once = true;
  e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('500', e.name, e.message, (e as any).status);
  f.faults.dropSocketOnce = true;
  e = await rejection(handle.callTool('echo', { text: 'a' }));
  console.log('drop', e.name, e.message, (e as any).status);
  console.log(await handle.callTool('echo', { text: 'ok' }), handle.status());
});
it('timeouts', async () => {
  const f = await fixture(cleanup);
  const { handle } = await open(cleanup, f.url);
  let e = await rejection(handle.callTool('slow', { ms: 500 }, { timeoutMs: 50 }));
  console.log('timeout', e.name, e.message);
  const ac = new AbortController();
  const p = handle.callTool('slow', { ms: 500 }, { signal: ac.signal });
  setTimeout(() => ac.abort(), 30);
  e = await rejection(p);
  console.log('abort', e.name, e.message);
  await settle(100);
  console.log(cancellations(f.requests).map(r => r.body));
});
it('init timeout', async () => {
  const f = await fixture(cleanup);
  f.faults.delayMs = 300;
  const t = Date.now();
  const e = await rejection(connect({ url: f.url, requestTimeoutMs: 50 }, { name: 'x' }));
  console.log('init timeout', Date.now() - t, e.name, e.message);
  await settle(400);
  console.log(f.requests.map(r => r.method + ' ' + r.rpcMethod));
});

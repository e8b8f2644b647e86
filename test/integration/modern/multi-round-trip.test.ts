/**
 * Multi round-trip requests (SEP-2322, spec 2026-07-28 basic/patterns/mrtr) against a scripted
 * 2026-07-28 server that records the wire: each round answered through the same handlers as the
 * 2025 era's server requests, sent again with a new id, `inputResponses` and the `requestState`
 * echoed exactly (none when none came), `resultType` missing read as complete, parallel calls
 * kept apart, failing handlers and the rounds limit as typed errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  InputRequestError,
  InputRoundsExceededError,
  RequestAbortedError,
  type ClientHandlers,
  type ConnectOptions,
  type ServerHandle,
} from '../../../src/index.js';
import { startMrtrFixture, type MrtrFixture } from '../../../servers/mrtr-fixture.js';

let fixture: MrtrFixture | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  handle = undefined;
  fixture = undefined;
});

const HANDLERS: ClientHandlers = {
  elicitation: (params) => ({ action: 'accept', content: { ok: params.message !== 'who?' } }),
  sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' }),
  roots: () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
};

async function start(options: ConnectOptions = {}): Promise<{ f: MrtrFixture; h: ServerHandle }> {
  fixture = await startMrtrFixture();
  handle = await connect(
    { url: fixture.url, keepalive: false, protocolVersion: 'modern' },
    { name: 'mrtr', handlers: HANDLERS, ...options },
  );
  return { f: fixture, h: handle };
}

function json(result: unknown): any {
  return JSON.parse((result as { content: Array<{ text: string }> }).content[0]!.text);
}

function calls(f: MrtrFixture, tool: string) {
  return f.requests.filter((r) => r.method === 'tools/call' && r.params.name === tool);
}

describe('multi round-trip requests', () => {
  it('one round: the elicitation handler answers, the request goes again with a new id and the state echoed', async () => {
    const { f, h } = await start({ extensions: { 'com.example/trace': {} } });
    const result = await h.callTool('confirm', { flow: 'a' });
    expect(json(result)).toEqual({
      flow: 'a',
      confirm: { action: 'accept', content: { ok: true } },
      state: 'state-a-1',
    });
    const [first, retry] = calls(f, 'confirm');
    expect(first!.params).not.toHaveProperty('inputResponses');
    expect(first!.params).not.toHaveProperty('requestState');
    expect(retry!.id).not.toEqual(first!.id);
    expect(retry!.params).toMatchObject({ name: 'confirm', arguments: { flow: 'a' }, requestState: 'state-a-1' });
    // Every round carries the modern envelope.
    expect(retry!.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    expect(retry!.params._meta['io.modelcontextprotocol/clientCapabilities']).toMatchObject({
      elicitation: {},
      sampling: {},
      roots: {},
      extensions: { 'com.example/trace': {} },
    });
  });

  it('two rounds: elicitation, then sampling and roots in one round, each state echoed', async () => {
    const { f, h } = await start();
    const result = json(await h.callTool('two_rounds', {}));
    expect(result).toEqual({
      state: 'round-2:accept',
      responses: {
        answer: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' },
        where: { roots: [{ uri: 'file:///work', name: 'work' }] },
      },
    });
    const sent = calls(f, 'two_rounds');
    expect(sent.map((r) => r.params.requestState)).toEqual([undefined, 'round-1', 'round-2:accept']);
    expect(new Set(sent.map((r) => r.id)).size).toBe(3);
  });

  it('parallel calls keep their own responses and state; a plain call in between carries neither', async () => {
    const { f, h } = await start();
    const [a, b, plain] = await Promise.all([
      h.callTool('confirm', { flow: 'a' }),
      h.callTool('confirm', { flow: 'b' }),
      h.callTool('plain', {}),
    ]);
    expect(json(a).state).toBe('state-a-1');
    expect(json(b).state).toBe('state-b-1');
    expect(plain.content).toEqual([{ type: 'text', text: 'done' }]);
    const retries = calls(f, 'confirm').filter((r) => r.params.requestState !== undefined);
    expect(retries.map((r) => [r.params.arguments.flow, r.params.requestState]).sort()).toEqual([
      ['a', 'state-a-1'],
      ['b', 'state-b-1'],
    ]);
    for (const r of calls(f, 'plain')) {
      expect(r.params).not.toHaveProperty('inputResponses');
      expect(r.params).not.toHaveProperty('requestState');
    }
  });

  it('no requestState in the result: none is sent back', async () => {
    const { f, h } = await start();
    expect(json(await h.callTool('stateless', {}))).toEqual({
      hasState: false,
      confirm: { action: 'accept', content: { ok: true } },
    });
    expect(calls(f, 'stateless')[1]!.params).not.toHaveProperty('requestState');
  });

  it('state without inputRequests: sent again at once with the state, no responses', async () => {
    const { h } = await start();
    expect(json(await h.callTool('state_only', {}))).toEqual({ state: 'load-shed', hasResponses: false });
  });

  it('resultType missing means complete, even beside inputRequests', async () => {
    const { f, h } = await start();
    const result = await h.callTool('plain', {});
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(calls(f, 'plain')).toHaveLength(1);
  });

  it('a declining handler is an answer: the server gets it', async () => {
    const { h } = await start({ handlers: { ...HANDLERS, elicitation: () => ({ action: 'decline' }) } });
    expect(json(await h.callTool('confirm', { flow: 'd' })).confirm).toEqual({ action: 'decline' });
  });

  it('a throwing handler fails the call with InputRequestError (no retry is sent)', async () => {
    const { f, h } = await start({
      handlers: {
        ...HANDLERS,
        elicitation: () => {
          throw new Error('the user closed the window');
        },
      },
    });
    const error = await h.callTool('confirm', { flow: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputRequestError);
    expect(error).toMatchObject({
      server: 'mrtr',
      method: 'tools/call',
      inputKey: 'confirm',
      inputMethod: 'elicitation/create',
    });
    expect((error as Error).message).toMatch(/the handler failed: the user closed the window/);
    expect(calls(f, 'confirm')).toHaveLength(1);
  });

  it('input no handler answers fails the call with InputRequestError naming it', async () => {
    const { h } = await start({ handlers: { elicitation: HANDLERS.elicitation } });
    const error = await h.callTool('two_rounds', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputRequestError);
    expect((error as Error).message).toMatch(/no handler for (sampling\/createMessage|roots\/list)/);
  });

  it('a server that keeps asking: InputRoundsExceededError after maxInputRounds retries', async () => {
    const { f, h } = await start({ maxInputRounds: 3 });
    const error = await h.callTool('forever', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputRoundsExceededError);
    expect(error).toMatchObject({ server: 'mrtr', method: 'tools/call', maxRounds: 3 });
    expect((error as Error).message).toMatch(/^\[mrtr\] 'tools\/call' still required input after 3 rounds/);
    expect(calls(f, 'forever')).toHaveLength(4); // the request and 3 retries
  });

  it('the caller aborting while a handler runs ends the call with RequestAbortedError', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const { f, h } = await start({
      handlers: {
        elicitation: (_params, context) => {
          seen = context.signal;
          controller.abort();
          return new Promise(() => {}); // a user who never answers
        },
      },
    });
    const error = await h.callTool('confirm', { flow: 'z' }, { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(seen?.aborted).toBe(true);
    expect(calls(f, 'confirm')).toHaveLength(1);
  });

  it('URL-mode elicitation inside a round goes to the urlElicitation handler', async () => {
    const urls: string[] = [];
    const { h } = await start({
      handlers: {
        urlElicitation: (params) => {
          urls.push(String(params.url));
          return { action: 'accept' };
        },
      },
    });
    expect(json(await h.callTool('url', {}))).toEqual({ link: { action: 'accept' } });
    expect(urls).toEqual(['https://example.com/x']);
  });
});

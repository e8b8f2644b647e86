/**
 * A hand-written 2026-07-28 server (stateless, JSON responses) whose tools answer with multi
 * round-trip `InputRequiredResult`s exactly as scripted, recording every request it gets, so a
 * test can read the wire: ids, `inputResponses`, `requestState`. Test fixture code.
 *
 * Tools (each keeps its own round count per `arguments.flow`, so parallel calls stay apart):
 * - `confirm`: one elicitation round with `requestState` "state-<flow>-1", then complete.
 * - `two_rounds`: an elicitation round, then a sampling + roots round, then complete.
 * - `stateless`: one elicitation round without `requestState`.
 * - `state_only`: one round with `requestState` and no `inputRequests`.
 * - `plain`: complete at once, without `resultType`.
 * - `forever`: input required on every round.
 * - `url`: one URL-mode elicitation round (the 2026 shape: no elicitationId).
 */
import { createServer } from 'node:http';
import { listenOnLoopback, readBody } from './listen.js';

export interface MrtrFixture {
  url: string;
  /** Every JSON-RPC request body, in arrival order. */
  readonly requests: Array<{ id: unknown; method: string; params: Record<string, any> }>;
  close(): Promise<void>;
}

const ELICIT = (message: string) => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean', default: true } } },
  },
});
const SAMPLE = {
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'capital of France?' } }], maxTokens: 10 },
};

type Params = Record<string, any>;

function toolResult(name: string, params: Params): Record<string, unknown> {
  const flow = String(params.arguments?.flow ?? name);
  const responses = params.inputResponses as Params | undefined;
  const text = (value: unknown) => ({
    resultType: 'complete',
    content: [{ type: 'text', text: JSON.stringify(value) }],
  });
  switch (name) {
    case 'confirm':
      if (!responses) return inputRequired({ confirm: ELICIT(`confirm ${flow}?`) }, `state-${flow}-1`);
      return text({ flow, confirm: responses.confirm, state: params.requestState });
    case 'two_rounds':
      if (!responses) return inputRequired({ who: ELICIT('who?') }, 'round-1');
      if (params.requestState === 'round-1')
        return inputRequired({ answer: SAMPLE, where: { method: 'roots/list' } }, `round-2:${responses.who?.action}`);
      return text({ state: params.requestState, responses });
    case 'stateless':
      if (!responses) return inputRequired({ confirm: ELICIT('no state') }, undefined);
      return text({ hasState: 'requestState' in params, confirm: responses.confirm });
    case 'state_only':
      if (params.requestState === undefined) return { resultType: 'input_required', requestState: 'load-shed' };
      return text({ state: params.requestState, hasResponses: 'inputResponses' in params });
    case 'plain':
      return { content: [{ type: 'text', text: 'done' }], inputRequests: { ignored: ELICIT('never') } };
    case 'forever':
      return inputRequired({ again: ELICIT('again') }, `s${Math.random()}`);
    case 'url':
      if (!responses)
        return inputRequired(
          {
            link: {
              method: 'elicitation/create',
              params: { mode: 'url', message: 'sign in', url: 'https://example.com/x' },
            },
          },
          'url-1',
        );
      return text({ link: responses.link });
    default:
      throw new Error(`unknown tool ${name}`);
  }
}

function inputRequired(inputRequests: Params, requestState: string | undefined): Record<string, unknown> {
  return requestState === undefined
    ? { resultType: 'input_required', inputRequests }
    : { resultType: 'input_required', inputRequests, requestState };
}

const TOOLS = ['confirm', 'two_rounds', 'stateless', 'state_only', 'plain', 'forever', 'url'].map((name) => ({
  name,
  inputSchema: { type: 'object' },
}));

export async function startMrtrFixture(): Promise<MrtrFixture> {
  const requests: MrtrFixture['requests'] = [];
  const http = createServer((req, res) => {
    void readBody(req).then((text) => {
      const body = JSON.parse(text) as { id?: unknown; method: string; params?: Params };
      if (body.id === undefined) return void res.writeHead(202).end();
      requests.push({ id: body.id, method: body.method, params: body.params ?? {} });
      const reply = (result: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
      };
      if (body.method === 'server/discover')
        return reply({
          resultType: 'complete',
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: {} },
          serverInfo: { name: 'mrtr-fixture', version: '1.0.0' },
        });
      if (body.method === 'tools/list')
        return reply({ resultType: 'complete', tools: TOOLS, ttlMs: 0, cacheScope: 'private' });
      if (body.method === 'tools/call') return reply(toolResult(String(body.params?.name), body.params ?? {}));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  const listening = await listenOnLoopback(http);
  return { url: `${listening.origin}/mcp`, requests, close: () => listening.close() };
}

/**
 * A 401 on a GET that resumes a stream (a POST response stream with Last-Event-ID, or the
 * listening stream) is an authorization, not a resume attempt without progress: one
 * authorization, then the stream resumes from its last event id with the new credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OutcomeUnknownError, type AuthChallenge, type AuthProvider } from '../../../src/index.js';
import {
  answerBasics,
  Cleanup,
  gets,
  header,
  open,
  replyJson,
  scriptedServer,
  sse,
  startSse,
  toolResult,
  until,
  type ScriptedRequest,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Credentials from a vault: `authorize` fetches the next token. */
class RotatingToken implements AuthProvider {
  generation = 1;
  challenges: AuthChallenge[] = [];
  constructor(private token = 'old') {}
  authorization(): string {
    return `Bearer ${this.token}`;
  }
  async authorize(challenge: AuthChallenge): Promise<void> {
    this.challenges.push(challenge);
    this.token = 'new';
    this.generation++;
  }
}

const refuseOld = (request: ScriptedRequest, res: Parameters<typeof replyJson>[0]): boolean => {
  if (header(request, 'authorization') !== 'Bearer old') return false;
  replyJson(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
  return true;
};

describe('a 401 on a resume GET', () => {
  it('authorizes once and resumes the response stream from its event id with the new token', async () => {
    let expired = false;
    let pendingId: unknown;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET' && header(request, 'last-event-id') === 'post-1') {
        if (refuseOld(request, res)) return;
        startSse(res);
        res.end(sse({ id: 'post-2', event: 'message', data: JSON.stringify(toolResult(pendingId, 'resumed')) }));
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-auth' })) return;
      // The token expires while the response is being worked on: the stream ends, the resume is refused.
      pendingId = request.body.id;
      expired = true;
      startSse(res);
      res.end('id: post-1\nretry: 10\ndata: \n\n');
    });
    const auth = new RotatingToken();
    const { handle } = await open(cleanup, server.url, { auth, keepalive: false });
    const result = await handle.callTool('echo', { text: 'x' });

    expect(expired).toBe(true);
    expect(result.content[0]!.text).toBe('resumed');
    expect(auth.challenges).toHaveLength(1);
    const resumes = gets(server.requests).filter((r) => header(r, 'last-event-id') === 'post-1');
    expect(resumes.map((r) => header(r, 'authorization'))).toEqual(['Bearer old', 'Bearer new']);
    expect(server.requests.filter((r) => r.rpcMethod === 'tools/call')).toHaveLength(1); // not sent again
  });

  it('a response stream whose resume stays refused ends with the authorization error, not a hang', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET' && header(request, 'last-event-id') === 'post-1') {
        replyJson(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-refused' })) return;
      startSse(res);
      res.end('id: post-1\nretry: 10\ndata: \n\n');
    });
    const refusing: AuthProvider = {
      generation: 1,
      authorization: () => 'Bearer old',
      authorize: async () => {
        throw new Error('the vault is sealed');
      },
    };
    const { handle } = await open(cleanup, server.url, { auth: refusing, keepalive: false, requestTimeoutMs: 30_000 });
    const started = Date.now();
    const error = await handle.callTool('echo', { text: 'x' }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // Its outcome is unknown (the server had started on it), and the cause says why it could not resume.
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error!.cause as Error).message).toMatch(/refused the credentials \(HTTP 401\) and no new ones came/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the listening stream refused on reconnect: one authorization, then it resumes from its last event id', async () => {
    let listenerGets = 0;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        listenerGets++;
        if (listenerGets === 1) {
          // The first listening stream delivers one event, then ends: the listener reconnects.
          startSse(res);
          res.end('id: listen-1\nretry: 10\ndata: \n\n');
          return;
        }
        if (refuseOld(request, res)) return;
        startSse(res);
        res.write(': open\n\n');
        return;
      }
      answerBasics(request, res, { sessionId: 'sid-listen' });
    });
    const auth = new RotatingToken();
    await open(cleanup, server.url, { auth, keepalive: false });
    await until(() => gets(server.requests).some((r) => header(r, 'authorization') === 'Bearer new'));

    const listens = gets(server.requests).map((r) => [header(r, 'last-event-id'), header(r, 'authorization')]);
    expect(listens).toEqual([
      [undefined, 'Bearer old'],
      ['listen-1', 'Bearer old'],
      ['listen-1', 'Bearer new'],
    ]);
    expect(auth.challenges).toHaveLength(1);
  });
});

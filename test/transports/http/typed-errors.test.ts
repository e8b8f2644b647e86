/**
 * Every error that reaches a caller is one of the documented classes (issue #21): the failures
 * found under chaos and fuzzing that used to escape as undici's or V8's own errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpSupervisorError, ProtocolError, TransportError, OutcomeUnknownError } from '../../../src/index.js';
import { answerBasics, Cleanup, open, rejection, scriptedServer, toolResult } from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function expectTyped(error: Error): asserts error is McpSupervisorError {
  expect(error).toBeInstanceOf(McpSupervisorError);
  expect((error as McpSupervisorError).code).toEqual(expect.any(String));
  expect((error as McpSupervisorError).retryable).toEqual(expect.any(Boolean));
}

describe('typed errors from a hostile HTTP server', () => {
  it('a JSON body cut short of its Content-Length: outcome unknown, a retryable OutcomeUnknownError caused by a TransportError; the connection goes on', async () => {
    let cut = true;
    const server = await scriptedServer(cleanup, (request, res, req) => {
      if (answerBasics(request, res, { sessionId: 'sid-cut' })) return;
      if (!cut) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(toolResult(request.body.id, 'whole')));
        return;
      }
      cut = false;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"jsonrpc":"2.0","id":', () => req.socket.destroy());
    });
    const { handle } = await open(cleanup, server.url);
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expectTyped(error);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.retryable).toBe(true);
    expect(error.cause).toBeInstanceOf(TransportError);
    expect((error.cause as Error).message).toMatch(/reading the response body failed/);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('whole');
  });

  it('a 100,000-deep JSON array body is a ProtocolError, not a stack overflow', async () => {
    const depth = 100_000;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-deep' })) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    });
    const { handle } = await open(cleanup, server.url);
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expectTyped(error);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/item 0 of a batch is not a JSON-RPC message: \[\[\[/);
    expect(handle.status().state).toBe('ready');
  });

  it('params JSON cannot encode are a ProtocolError naming the method, and nothing is left pending', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-bigint' })) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toolResult(request.body.id, 'ok')));
    });
    const { handle } = await open(cleanup, server.url);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const args of [{ n: 10n }, cyclic]) {
      const error = await rejection(handle.callTool('echo', args));
      expectTyped(error);
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error.message).toMatch(/cannot send 'tools\/call': its params cannot be encoded as JSON/);
    }
    expect(handle.status().requests.inFlight).toBe(0);
  });
});

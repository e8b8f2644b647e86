/**
 * A frozen server (its process SIGSTOPped: sockets open, nothing answered) under load: every
 * call times out and releases its exchange, and once the process resumes a normal call is
 * answered in time (servers/fixture-process.ts; issue #21).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RequestTimeoutError } from '../../../src/index.js';
import { startFixtureProcess } from '../../../servers/fixture-process.js';
import { Cleanup, open, rejection } from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('a frozen server', () => {
  it('times out every call while frozen, more than the pool holds, and answers in time once thawed', async () => {
    const server = cleanup.add(await startFixtureProcess(), (s) => s.close());
    const { handle } = await open(cleanup, server.url);
    server.freeze();
    const calls = Array.from({ length: 140 }, () =>
      rejection(handle.callTool('echo', { text: 'frozen' }, { timeoutMs: 500 })),
    );
    for (const error of await Promise.all(calls)) expect(error).toBeInstanceOf(RequestTimeoutError);
    server.thaw();
    const answer = await handle.callTool('echo', { text: 'thawed' }, { timeoutMs: 3_000 });
    expect(answer.content[0]!.text).toBe('thawed');
  });
});

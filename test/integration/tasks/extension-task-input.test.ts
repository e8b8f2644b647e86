/**
 * 2026-07-28 tasks extension, the parts a task needs beyond polling, against the fixture written
 * by the extension's spec (servers/tasks-extension-server.ts):
 *
 * - `input_required`: the task's `inputRequests` are answered through the same handlers as
 *   multi round-trip requests, sent with `tasks/update`, and the task is polled on; a key is
 *   answered once; the rounds are bounded by `maxInputRounds`; input that cannot be given
 *   cancels the call's task.
 * - status notifications: while a task is polled its id is in the listen's `taskIds`, and a
 *   `notifications/tasks` ends the wait at once (no poll timer fired); it leaves the set when the
 *   task ends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSupervisor,
  InputRequestError,
  InputRoundsExceededError,
  type ClientHandlers,
  type ServerHandle,
  type Supervisor,
  type SupervisorOptions,
} from '../../../src/index.js';
import { startTasksExtensionServer, type TasksExtensionServer } from '../../../servers/tasks-extension-server.js';
import { ManualTimers } from '../../transports/helpers.js';

const POLL_MS = 2_500;
let server: TasksExtensionServer | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  supervisor = server = undefined;
});

interface Seen {
  elicitations: { message: unknown; key: string | number }[];
  samplings: number;
  roots: number;
}

function handlers(seen: Seen): ClientHandlers {
  return {
    elicitation: (params, context) => {
      seen.elicitations.push({ message: params.message, key: context.requestId });
      return { action: 'accept', content: { name: 'Luca' } };
    },
    sampling: () => {
      seen.samplings++;
      return { role: 'assistant', content: { type: 'text', text: 'short' }, model: 'm' };
    },
    roots: () => {
      seen.roots++;
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    },
  };
}

async function open(
  options: Partial<SupervisorOptions> = {},
  listen = false,
): Promise<{ handle: ServerHandle; timers: ManualTimers; server: TasksExtensionServer; seen: Seen }> {
  server = await startTasksExtensionServer({ pollIntervalMs: POLL_MS, listen });
  const timers = new ManualTimers();
  const seen: Seen = { elicitations: [], samplings: 0, roots: 0 };
  supervisor = createSupervisor({
    servers: { jobs: { url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 5_000 } },
    timers,
    handlers: handlers(seen),
    ...options,
  });
  await supervisor.start();
  return { handle: supervisor.server('jobs'), timers, server, seen };
}

function text(result: { content: Array<{ type: string; [key: string]: unknown }> }): string {
  return result.content[0]?.['text'] as string;
}

function updates(server: TasksExtensionServer): Record<string, unknown>[] {
  return server.seen.filter((r) => r.method === 'tasks/update').map((r) => r.params);
}

describe('2026-07-28 task input through the handlers', () => {
  it('callTool: an input_required task is answered by the elicitation handler, tasks/update sent, and polled to its end', async () => {
    const { handle, timers, server, seen } = await open();
    const call = handle.callTool('greet', {});
    await expect.poll(() => server.created.length).toBe(1);
    const taskId = server.created[0]!;
    (await timers.nth(0)).fire(); // tasks/get: input_required, { name: elicitation/create }
    await expect.poll(() => updates(server).length).toBe(1);
    expect(seen.elicitations).toEqual([{ message: 'Please enter your name.', key: 'name' }]);
    expect(updates(server)[0]).toMatchObject({
      taskId,
      inputResponses: { name: { action: 'accept', content: { name: 'Luca' } } },
    });
    (await timers.nth(1)).fire(); // tasks/get: completed
    expect(JSON.parse(text(await call))).toEqual({ name: { action: 'accept', content: { name: 'Luca' } } });
    // Modern requests declare `roots` without `listChanged` (2026-07-28 removed the notification).
    for (const request of server.seen)
      expect(
        (request.params['_meta'] as Record<string, any>)['io.modelcontextprotocol/clientCapabilities'].roots,
      ).toEqual({});
  });

  it('two rounds: elicitation and roots answered together, then sampling; each handler asked once', async () => {
    const { handle, timers, server, seen } = await open();
    const task = await handle.callToolAsTask('interview', {});
    const result = task.result();
    (await timers.nth(0)).fire();
    await expect.poll(() => updates(server).length).toBe(1);
    expect(Object.keys(updates(server)[0]!['inputResponses'] as object).sort()).toEqual(['name', 'roots']);
    (await timers.nth(1)).fire();
    await expect.poll(() => updates(server).length).toBe(2);
    expect(updates(server)[1]).toMatchObject({ inputResponses: { summary: { model: 'm' } } });
    (await timers.nth(2)).fire();
    const answers = JSON.parse(text(await result));
    expect(answers).toMatchObject({
      name: { action: 'accept' },
      roots: { roots: [{ uri: 'file:///work' }] },
      summary: { content: { text: 'short' } },
    });
    expect([seen.elicitations.length, seen.roots, seen.samplings]).toEqual([1, 1, 1]);
  });

  it('setRoots on a modern server sends no notifications/roots/list_changed; its roots answer the task’s roots/list', async () => {
    const { handle, timers, server, seen } = await open();
    await handle.setRoots([{ uri: 'file:///set', name: 'set' }]);
    const call = handle.callTool('interview', {});
    (await timers.nth(0)).fire();
    await expect.poll(() => updates(server).length).toBe(1);
    expect(updates(server)[0]).toMatchObject({ inputResponses: { roots: { roots: [{ uri: 'file:///set' }] } } });
    expect(seen.roots).toBe(0);
    (await timers.nth(1)).fire();
    await expect.poll(() => updates(server).length).toBe(2);
    (await timers.nth(2)).fire();
    await call;
    expect(server.count('notifications/roots/list_changed')).toBe(0);
  });

  it('a key still shown after its answer was sent is not answered again', async () => {
    const { handle, timers, server, seen } = await open();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    const result = task.result();
    const ask = { method: 'elicitation/create', params: { mode: 'form', message: 'Name?' } };
    server.needInput(task.taskId!, { name: ask });
    (await timers.nth(0)).fire();
    await expect.poll(() => updates(server).length).toBe(1);
    server.needInput(task.taskId!, { name: ask }); // the server has not processed the answer yet
    (await timers.nth(1)).fire();
    await timers.nth(2); // polled, saw the same key, waits again
    expect(updates(server)).toHaveLength(1);
    expect(seen.elicitations).toHaveLength(1);
    server.complete(task.taskId!);
    (await timers.nth(2)).fire();
    expect(text(await result)).toBe('built app');
  });

  it('maxInputRounds bounds the rounds: InputRoundsExceededError, and callTool cancels its task', async () => {
    const { handle, timers, server } = await open({ maxInputRounds: 2 });
    const call = handle.callTool('endless', {});
    const failed = call.catch((error: unknown) => error);
    for (let n = 0; n < 3; n++) (await timers.nth(n)).fire();
    const error = await failed;
    expect(error).toBeInstanceOf(InputRoundsExceededError);
    expect(error).toMatchObject({ method: 'tools/call', maxRounds: 2, inputRequests: { q3: {} } });
    expect(updates(server)).toHaveLength(2);
    await expect.poll(() => server.status(server.created[0]!)).toBe('cancelled');
  });

  it('input no handler can give: InputRequestError naming the key, and the task is cancelled', async () => {
    const { handle, timers, server } = await open({ handlers: {} });
    const call = handle.callTool('greet', {}).catch((error: unknown) => error);
    (await timers.nth(0)).fire();
    const error = await call;
    expect(error).toBeInstanceOf(InputRequestError);
    expect((error as Error).message).toContain('name');
    expect(updates(server)).toHaveLength(0);
    await expect.poll(() => server.status(server.created[0]!)).toBe('cancelled');
  });
});

describe('2026-07-28 task status notifications through subscriptions/listen', () => {
  it('a polled task joins the listen’s taskIds; its notification ends the wait without a poll; it leaves when done', async () => {
    const { handle, timers, server } = await open({}, true);
    const call = handle.callTool('build', { target: 'app' });
    await expect.poll(() => server.created.length).toBe(1);
    const taskId = server.created[0]!;
    await expect.poll(() => server.listened).toContainEqual([taskId]);
    await timers.nth(0); // the poll timer is set, never fired
    server.complete(taskId); // notifications/tasks (completed, result inline)
    expect(text(await call)).toBe('built app');
    expect(server.count('tasks/get')).toBe(0);
    // The set is empty again: the listen that carried the task closes (nothing else to listen for).
    // Bounded below the 5 s a replaced listen may linger while a replacement is awaited: none is.
    await expect.poll(() => server.openListens(), { timeout: 3_000 }).toBe(0);
  });

  it('an input_required notification is answered at once, and the completion ends the wait', async () => {
    const { handle, server, seen } = await open({}, true);
    const task = await handle.callToolAsTask('build', { target: 'lib' });
    const result = task.result();
    await expect.poll(() => server.listened).toContainEqual([task.taskId]);
    server.needInput(task.taskId!, {
      who: { method: 'elicitation/create', params: { mode: 'form', message: 'Who?' } },
    });
    await expect.poll(() => updates(server).length).toBe(1);
    expect(seen.elicitations).toEqual([{ message: 'Who?', key: 'who' }]);
    server.complete(task.taskId!);
    expect(text(await result)).toBe('built lib');
    expect(server.count('tasks/get')).toBe(0);
  });
});

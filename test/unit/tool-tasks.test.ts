/** The task parts of a server's tool calls, wired to their server (src/tasks/tool-tasks.ts). */
import { describe, expect, it } from 'vitest';
import { Emitter } from '../../src/core/emitter.js';
import type { RuntimeEvents, TransitionEvent } from '../../src/runtime/context/events.js';
import { toolTasks, type TaskHost } from '../../src/tasks/tool-tasks.js';
import { realTimers } from '../../src/transports/transport.js';

function server() {
  const events = new Emitter<RuntimeEvents>();
  const sent: { method: string; params: unknown }[] = [];
  const session = { era: 'legacy' as const, capabilities: { tasks: { requests: { tools: { call: {} } } } } };
  const host: TaskHost = {
    context: { name: 'tasks', identity: 'tasks', timers: undefined, events, session: () => session },
    requests: { maxInputRounds: 3 },
    request: (method, params) => {
      sent.push({ method, params });
      return Promise.resolve({ answered: method });
    },
    answerInput: (method) => Promise.resolve({ answeredBy: method }),
    watchTask: () => () => undefined,
  };
  return { host, events, sent, session };
}

const LIST = { tools: [{ name: 'slow', execution: { taskSupport: 'required' } }, { name: 'fast' }] };

function transition(to: TransitionEvent['to']): TransitionEvent {
  return { server: 'tasks', from: 'ready', to, cause: 'test', at: 0 };
}

describe('the task parts of tool calls', () => {
  it('what each tool says of tasks is forgotten when the server says its tools changed, not its prompts', () => {
    const { host, events, session } = server();
    const { modes } = toolTasks(host, (raw) => raw);
    modes.learn(LIST, session, true);
    expect(modes.modeOf('slow', session)).toBe('required');
    expect(modes.modeOf('fast', session)).toBe('forbidden');
    events.emit('listChanged', { list: 'prompts' });
    expect(modes.modeOf('slow', session)).toBe('required');
    events.emit('listChanged', { list: 'tools' });
    expect(modes.modeOf('slow', session)).toBeUndefined();
  });

  it('the context speaks for the server: its name, requests, session, input answers and real timers by default', async () => {
    const { host, sent, session } = server();
    const { context } = toolTasks(host, (raw) => raw);
    expect(context.server).toBe('tasks');
    expect(context.timers).toBe(realTimers);
    expect(context.maxInputRounds).toBe(3);
    expect(context.session()).toBe(session);
    await expect(context.request('tasks/get', { taskId: 't' })).resolves.toEqual({ answered: 'tasks/get' });
    expect(sent).toEqual([{ method: 'tasks/get', params: { taskId: 't' } }]);
    await expect(context.answerInput('roots/list', {}, {} as never)).resolves.toEqual({ answeredBy: 'roots/list' });
  });

  it('a wait hears that the connection went down (closed or failed), and only that', () => {
    const { host, events } = server();
    const { context } = toolTasks(host, (raw) => raw);
    let downs = 0;
    const release = context.onDown(() => downs++);
    events.emit('transition', transition('connecting'));
    events.emit('transition', transition('failed'));
    events.emit('transition', transition('closed'));
    expect(downs).toBe(2);
    release();
    events.emit('transition', transition('closed'));
    expect(downs).toBe(2);
  });

  it('handle.tasks finishes a result with the given finish', async () => {
    const { host } = server();
    const { client } = toolTasks(host, (raw) => ({ finished: raw }));
    // 2025-11-25 `tasks/result` of a completed task: the raw result, finished.
    host.request = (method) =>
      Promise.resolve(
        method === 'tasks/get'
          ? {
              taskId: 't',
              status: 'completed',
              createdAt: '2026-01-01T00:00:00Z',
              lastUpdatedAt: '2026-01-01T00:00:00Z',
              ttl: null,
            }
          : { content: [] },
      );
    await expect(client.result('t')).resolves.toEqual({ finished: { content: [] } });
  });
});

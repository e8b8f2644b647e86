/** The task shapes of both eras (src/tasks/schemas.ts) and what a tools list says of task support. */
import { describe, expect, it } from 'vitest';
import { InvalidResultError } from '../../src/index.js';
import { withTasksExtension } from '../../src/protocol/task-capabilities.js';
import { isModernCreated, parseLegacyCreated, parseTask } from '../../src/tasks/schemas.js';
import { ToolTaskModes } from '../../src/tasks/tool-task-modes.js';

const times = { createdAt: '2025-11-25T10:30:00Z', lastUpdatedAt: '2025-11-25T10:40:00Z' };

describe('task shapes', () => {
  it('2025-11-25: { task } with ttl and pollInterval becomes a TaskInfo with ttlMs and pollIntervalMs', () => {
    const created = { task: { taskId: 't1', status: 'working', ttl: 60_000, pollInterval: 5_000, ...times } };
    expect(parseLegacyCreated(created, 's')).toEqual({
      taskId: 't1',
      status: 'working',
      statusMessage: undefined,
      ttlMs: 60_000,
      pollIntervalMs: 5_000,
      ...times,
    });
    expect(
      parseTask('legacy', 'tasks/get', { taskId: 't1', status: 'completed', ttl: null, ...times }, 's').ttlMs,
    ).toBe(null);
  });

  it('2026-07-28: resultType "task" marks a task handle; tasks/get carries result or error inline', () => {
    expect(isModernCreated({ resultType: 'task', taskId: 't' })).toBe(true);
    expect(isModernCreated({ resultType: 'complete', content: [] })).toBe(false);
    expect(isModernCreated({ content: [] })).toBe(false);
    const failed = parseTask(
      'modern',
      'tasks/get',
      {
        resultType: 'complete',
        taskId: 't',
        status: 'failed',
        ttlMs: 1,
        error: { code: -32603, message: 'x' },
        ...times,
      },
      's',
    );
    expect(failed).toMatchObject({ status: 'failed', ttlMs: 1, error: { code: -32603, message: 'x' } });
  });

  it('a malformed task is an InvalidResultError naming the field', () => {
    const bad = () => parseTask('legacy', 'tasks/get', { taskId: 5, status: 'working', ...times }, 's');
    expect(bad).toThrow(InvalidResultError);
    expect(bad).toThrow(/taskId/);
    expect(() => parseTask('modern', 'tasks/get', { taskId: 't', status: 'sleeping', ...times }, 's')).toThrow(
      /status/,
    );
    expect(() => parseLegacyCreated({ taskId: 't' }, 's')).toThrow(/task/);
  });
});

describe('tool task support', () => {
  it('is known per session, forbidden unless the tool says required or optional', () => {
    const modes = new ToolTaskModes();
    const session = {};
    modes.learn(
      {
        tools: [
          { name: 'a', execution: { taskSupport: 'required' } },
          { name: 'b', execution: { taskSupport: 'optional' } },
          { name: 'c' },
        ],
      },
      session,
      true,
    );
    expect(['a', 'b', 'c', 'd'].map((name) => modes.modeOf(name, session))).toEqual([
      'required',
      'optional',
      'forbidden',
      'forbidden',
    ]);
    expect(modes.modeOf('a', {})).toBeUndefined(); // another session: list again
    modes.invalidate();
    expect(modes.modeOf('a', session)).toBeUndefined();
  });

  it('the extension is added to the capabilities, the rest kept', () => {
    expect(withTasksExtension({ roots: { listChanged: true }, extensions: { 'x/y': { a: 1 } } })).toEqual({
      roots: { listChanged: true },
      extensions: { 'x/y': { a: 1 }, 'io.modelcontextprotocol/tasks': {} },
    });
  });
});

/** The tasks whose status the modern listen asks for (src/runtime/listening/task-subscriptions.ts). */
import { describe, expect, it } from 'vitest';
import { offersTaskNotifications, WatchedTasks } from '../../src/runtime/listening/task-subscriptions.js';

describe('the watched tasks', () => {
  it('a task is in the set while any wait on it lasts; each change (only) re-issues the listen', () => {
    let changes = 0;
    const watched = new WatchedTasks(() => changes++);
    const first = watched.watch('t-1');
    const second = watched.watch('t-1');
    const other = watched.watch('t-2');
    expect(watched.ids()).toEqual(['t-1', 't-2']);
    expect(changes).toBe(2);
    first();
    first(); // a release is idempotent
    expect(watched.ids()).toEqual(['t-1', 't-2']);
    expect(changes).toBe(2);
    second();
    other();
    expect(watched.ids()).toEqual([]);
    expect(changes).toBe(4);
  });

  it('task notifications are offered by a server that declares the tasks extension', () => {
    expect(offersTaskNotifications({ extensions: { 'io.modelcontextprotocol/tasks': {} } })).toBe(true);
    expect(offersTaskNotifications({ tasks: {} })).toBe(false);
    expect(offersTaskNotifications(undefined)).toBe(false);
  });
});

/** What the modern listener asks for (spec 2026-07-28, subscriptions): what the server offers of what we want. */
import { describe, expect, it } from 'vitest';
import { listenFilter } from '../../src/runtime/listening/listen.js';

describe('the subscriptions/listen filter', () => {
  it('asks for the list changes the server declares, and the subscribed URIs when it offers resources.subscribe', () => {
    const capabilities = {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
    };
    expect(listenFilter(capabilities, ['file:///a', 'file:///b'])).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['file:///a', 'file:///b'],
    });
  });

  it('leaves out what the server does not declare (the server must not send what was not asked for)', () => {
    expect(listenFilter({ tools: {}, resources: { listChanged: true } }, ['file:///a'])).toEqual({
      resourcesListChanged: true,
    });
    expect(listenFilter({ tools: { listChanged: 'yes' } }, [])).toBeUndefined();
  });

  it('is undefined when there is nothing to listen for: no listen is opened', () => {
    expect(listenFilter({}, [])).toBeUndefined();
    expect(listenFilter({ resources: { subscribe: true } }, [])).toBeUndefined();
  });

  it('asks for the status of the polled tasks only from a server that declares the tasks extension', () => {
    const extension = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    expect(listenFilter(extension, [], ['t-1', 't-2'])).toEqual({ taskIds: ['t-1', 't-2'] });
    expect(listenFilter({ tools: {}, extensions: { 'com.example/other': {} } }, [], ['t-1'])).toBeUndefined();
    expect(listenFilter(extension, [], [])).toBeUndefined();
  });
});

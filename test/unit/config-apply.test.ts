/**
 * Live config: `disabled` servers, `enable`/`disable` at run time, and `sup.apply(config)` moving a
 * running supervisor to a new configuration, against real HTTP servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { ConfigError, createSupervisor, type ServerConfigInput } from '../../src/index.js';

let one: HttpFixture;
let two: HttpFixture;
beforeAll(async () => {
  [one, two] = await Promise.all([startHttpFixture(), startHttpFixture()]);
});
afterAll(async () => {
  await Promise.all([one.close(), two.close()]);
});

const initializes = (fixture: HttpFixture) => fixture.requests.filter((r) => r.rpcMethod === 'initialize').length;

describe('disabled servers', () => {
  it('are loaded, not started; enable starts them, disable stops them and keeps the config', async () => {
    const before = initializes(two);
    const sup = createSupervisor({ servers: { a: { url: one.url }, b: { url: two.url, disabled: true } } });
    try {
      await sup.start();
      expect(sup.status().a?.state).toBe('ready');
      expect(sup.status().b).toMatchObject({ name: 'b', state: 'disabled' });
      expect(initializes(two)).toBe(before);
      expect(() => sup.server('b')).toThrow(ConfigError);
      expect(() => sup.server('b')).toThrow(/disabled.*sup\.enable\('b'\)/);

      const handle = sup.enable('b');
      await expect(handle.listTools()).resolves.toMatchObject({ tools: expect.any(Array) });
      expect(sup.status().b?.state).toBe('ready');

      await sup.disable('b');
      expect(sup.status().b?.state).toBe('disabled');
      await expect(handle.listTools()).rejects.toThrow();
      expect(() => sup.add('b', { url: two.url })).toThrow(/in use/);
    } finally {
      await sup.stop();
    }
  });

  it('enable and disable of an unknown name are ConfigErrors naming the configured ones', async () => {
    const sup = createSupervisor({ servers: { a: { url: one.url, disabled: true } } });
    expect(() => sup.enable('zz')).toThrow(/unknown server 'zz' \(configured: a\)/);
    await expect(sup.disable('zz')).rejects.toThrow(ConfigError);
    await sup.stop();
  });
});

describe('sup.apply', () => {
  it('starts added servers, stops removed ones, restarts changed ones, leaves the rest alone', async () => {
    const servers: Record<string, ServerConfigInput> = {
      keep: { url: one.url },
      change: { url: one.url, requestTimeoutMs: 5_000 },
      drop: { url: two.url },
      wake: { url: two.url, disabled: true },
      sleep: { url: one.url },
    };
    const sup = createSupervisor({ servers });
    try {
      await sup.start();
      const keep = sup.server('keep');
      const keepSession = keep.status().sessionId;
      const transitions: string[] = [];
      sup.on('transition', (event) => transitions.push(`${event.server}:${event.to}`));

      const result = await sup.apply({
        servers: {
          keep: { url: one.url },
          change: { url: one.url, requestTimeoutMs: 6_000 },
          wake: { url: two.url },
          sleep: { url: one.url, disabled: true },
          fresh: { url: two.url },
        },
      });
      expect(result).toEqual({
        added: ['fresh'],
        removed: ['drop'],
        restarted: ['change'],
        enabled: ['wake'],
        disabled: ['sleep'],
        unchanged: ['keep'],
      });
      expect(sup.server('keep')).toBe(keep);
      expect(keep.status().sessionId).toBe(keepSession);
      expect(transitions.filter((t) => t.startsWith('keep:'))).toEqual([]);
      await Promise.all(['change', 'wake', 'fresh'].map((name) => sup.server(name).listTools()));
      expect(Object.fromEntries(Object.entries(sup.status()).map(([name, s]) => [name, s.state]))).toEqual({
        keep: 'ready',
        change: 'ready',
        wake: 'ready',
        fresh: 'ready',
        sleep: 'disabled',
      });
    } finally {
      await sup.stop();
    }
  });

  it('a disabled server keeps the newest settings: enable starts it as the config says now', async () => {
    const sup = createSupervisor({
      servers: { a: { url: one.url }, off: { url: 'http://127.0.0.1:9/mcp', disabled: true } },
    });
    try {
      await sup.start();
      const moved = await sup.apply({ servers: { a: { url: one.url }, off: { url: two.url, disabled: true } } });
      expect(moved.unchanged).toEqual(['a', 'off']);
      await expect(sup.enable('off').listTools()).resolves.toMatchObject({ tools: expect.any(Array) });
      expect(sup.status().off?.state).toBe('ready');
    } finally {
      await sup.stop();
    }
  });

  it('an invalid config changes nothing', async () => {
    const sup = createSupervisor({ servers: { a: { url: one.url } } });
    try {
      await sup.start();
      const handle = sup.server('a');
      await expect(sup.apply({ servers: { a: { url: one.url }, b: { comand: 'x' } as never } })).rejects.toThrow(
        /servers\.b: has neither/,
      );
      expect(Object.keys(sup.status())).toEqual(['a']);
      expect(sup.server('a')).toBe(handle);
      expect(handle.status().state).toBe('ready');
    } finally {
      await sup.stop();
    }
  });
});

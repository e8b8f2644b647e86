/** fileTokenStore against real temp directories: modes, atomic replace, parallel saves, bad files. */
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileTokenStore, memoryTokenStore } from '../../../src/auth/token-store.js';
import type { StoredAuthorization } from '../../../src/auth/types.js';
import { AuthorizationError, ConfigError } from '../../../src/core/errors.js';
import { rejection } from '../../transports/helpers.js';

const posix = process.platform !== 'win32';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-supervisor-tokens-'));
  file = join(dir, 'tokens.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function authorization(n: number): StoredAuthorization {
  return {
    issuer: 'https://auth.example.com',
    tokens: {
      access_token: `access-${n}`,
      token_type: 'Bearer',
      refresh_token: `refresh-${n}`,
      expires_at: 1_700_000_000_000 + n,
      scope: 'mcp',
    },
    client: { client_id: `client-${n}`, token_endpoint_auth_method: 'none' },
  };
}

describe('fileTokenStore', () => {
  it('loads undefined when the file does not exist, and does not create it', async () => {
    const store = fileTokenStore(file);
    expect(await store.load('https://mcp.example.com/mcp')).toBeUndefined();
    await store.clear('https://mcp.example.com/mcp');
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('round-trips values, and a second store on the same file sees them', async () => {
    await fileTokenStore(file).save('https://a.example.com/mcp', authorization(1));
    expect(await fileTokenStore(file).load('https://a.example.com/mcp')).toEqual(authorization(1));
    expect(await fileTokenStore(file).load('https://other.example.com/mcp')).toBeUndefined();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ 'https://a.example.com/mcp': authorization(1) });
  });

  it('copies values in and out', async () => {
    const store = fileTokenStore(file);
    const value = authorization(1);
    const saving = store.save('k', value);
    value.tokens!.access_token = 'mutated before the write ran';
    await saving;
    const loaded = await store.load('k');
    expect(loaded?.tokens?.access_token).toBe('access-1');
    loaded!.tokens!.access_token = 'mutated after load';
    expect((await store.load('k'))?.tokens?.access_token).toBe('access-1');
  });

  it('clear removes only that key', async () => {
    const store = fileTokenStore(file);
    await store.save('a', authorization(1));
    await store.save('b', authorization(2));
    await store.clear('a');
    expect(await store.load('a')).toBeUndefined();
    expect(await store.load('b')).toEqual(authorization(2));
    await store.clear('never-saved');
    expect(await store.load('b')).toEqual(authorization(2));
  });

  it('treats "__proto__" as an ordinary key', async () => {
    const store = fileTokenStore(file);
    await store.save('__proto__', authorization(1));
    await store.save('b', authorization(2));
    expect(await store.load('__proto__')).toEqual(authorization(1));
    expect(await store.load('b')).toEqual(authorization(2));
  });

  it.runIf(posix)('creates the file 0600 and a missing parent directory 0700', async () => {
    const nested = join(dir, 'config', 'mcp', 'tokens.json');
    await fileTokenStore(nested).save('k', authorization(1));
    expect((await stat(nested)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'config', 'mcp'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'config'))).mode & 0o777).toBe(0o700);
  });

  it.runIf(posix)('tightens an existing file with wider permissions to 0600 on save', async () => {
    await writeFile(file, '{}\n');
    await chmod(file, 0o644);
    await fileTokenStore(file).save('k', authorization(1));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it.runIf(posix)('is 0600 whatever the umask', async () => {
    const previous = process.umask(0);
    try {
      await fileTokenStore(file).save('k', authorization(1));
    } finally {
      process.umask(previous);
    }
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('keeps every save of many parallel ones, from one store and from two stores on the same file', async () => {
    const one = fileTokenStore(file);
    const two = fileTokenStore(join(dir, '.', 'tokens.json'));
    const keys = Array.from({ length: 40 }, (_, n) => `https://server-${n}.example.com/mcp`);
    await Promise.all(keys.map((key, n) => (n % 2 === 0 ? one : two).save(key, authorization(n))));
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, StoredAuthorization>;
    expect(Object.keys(stored).sort()).toEqual([...keys].sort());
    for (const [n, key] of keys.entries()) expect(await one.load(key)).toEqual(authorization(n));
  });

  it('never shows a reader a partial file, and leaves no temp files behind', async () => {
    const store = fileTokenStore(file);
    await store.save('seed', authorization(0));
    // A large value makes each write take long enough for the reader to race it.
    const big = { ...authorization(1), issuer: `https://auth.example.com/${'x'.repeat(128 * 1024)}` };
    let writing = true;
    let reads = 0;
    let torn = 0;
    const reader = (async () => {
      while (writing) {
        const text = await readFile(file, 'utf8');
        try {
          JSON.parse(text);
        } catch {
          torn++;
        }
        reads++;
      }
    })();
    await Promise.all(Array.from({ length: 12 }, (_, n) => store.save(`k${n}`, big)));
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(torn).toBe(0);
    expect(await readdir(dir)).toEqual(['tokens.json']);
  });

  it('rejects a corrupt file with a fatal AuthorizationError naming the path, without its contents, and does not overwrite it', async () => {
    const contents = '{"https://a.example.com/mcp": {"tokens": {"access_token": "secret-token-123"';
    await writeFile(file, contents);
    const store = fileTokenStore(file);
    for (const operation of [store.load('k'), store.save('k', authorization(1)), store.clear('k')]) {
      const error = await rejection(operation);
      expect(error).toBeInstanceOf(AuthorizationError);
      expect((error as AuthorizationError).fatal).toBe(true);
      expect(error.message).toContain(file);
      expect(error.message).toContain('not valid JSON');
      expect(error.message).not.toContain('secret-token-123');
      expect(error.cause).toBeUndefined();
    }
    expect(await readFile(file, 'utf8')).toBe(contents);
    expect(await readdir(dir)).toEqual(['tokens.json']);
  });

  it('rejects valid JSON that is not an object of objects', async () => {
    for (const contents of ['[]', '"tokens"', 'null', '{"k": "not an object"}', '{"k": [1]}']) {
      await writeFile(file, contents);
      const error = await rejection(fileTokenStore(file).load('k'));
      expect(error).toBeInstanceOf(AuthorizationError);
      expect(error.message).toContain(file);
    }
  });

  it('reads an empty file as an empty store', async () => {
    await writeFile(file, '\n');
    const store = fileTokenStore(file);
    expect(await store.load('k')).toBeUndefined();
    await store.save('k', authorization(1));
    expect(await store.load('k')).toEqual(authorization(1));
  });

  it('names the path when the file cannot be read', async () => {
    const error = await rejection(fileTokenStore(dir).load('k'));
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error.message).toContain(dir);
    expect(error.message).toContain('EISDIR');
    expect((error as AuthorizationError).fatal).toBe(true);
  });

  it('rejects bad arguments with ConfigError', async () => {
    expect(() => fileTokenStore('')).toThrow(ConfigError);
    const store = fileTokenStore(file);
    await expect(store.load('')).rejects.toBeInstanceOf(ConfigError);
    await expect(store.save('k', null as unknown as StoredAuthorization)).rejects.toBeInstanceOf(ConfigError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(store.save('k', cyclic as StoredAuthorization)).rejects.toBeInstanceOf(ConfigError);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('memoryTokenStore', () => {
  it('round-trips copies and clears one key', async () => {
    const store = memoryTokenStore();
    const value = authorization(1);
    await store.save('a', value);
    await store.save('b', authorization(2));
    value.tokens!.access_token = 'mutated';
    expect(await store.load('a')).toEqual(authorization(1));
    await store.clear('a');
    expect(await store.load('a')).toBeUndefined();
    expect(await store.load('b')).toEqual(authorization(2));
  });
});

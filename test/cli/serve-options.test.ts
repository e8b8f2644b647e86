/**
 * The pieces of `serve --http` that read the environment and the command line: the socket
 * inherited from systemd or a predecessor (`LISTEN_FDS`, only when `LISTEN_PID` names this
 * process; the variables never reach the servers it starts), and the store a `--store` names (a
 * Redis URL is Redis, anything else a file).
 */
import { describe, expect, it } from 'vitest';
import { cliStore, isRedisUrl } from '../../src/cli/cli-store.js';
import { inheritedSocket } from '../../src/cli/reload.js';

describe('serve: the inherited socket', () => {
  it('takes fd 3 when LISTEN_FDS is set for this process (or for no process in particular), and removes the variables', () => {
    const env: NodeJS.ProcessEnv = { LISTEN_FDS: '1', LISTEN_PID: '4242', LISTEN_FDNAMES: 'mcp', PATH: '/bin' };
    expect(inheritedSocket(env, 4242)).toBe(3);
    expect(env).toEqual({ PATH: '/bin' });
    expect(inheritedSocket({ LISTEN_FDS: '1' }, 4242)).toBe(3);
  });

  it('takes nothing meant for another process, or when none was passed', () => {
    const env: NodeJS.ProcessEnv = { LISTEN_FDS: '1', LISTEN_PID: '1' };
    expect(inheritedSocket(env, 4242)).toBeUndefined();
    expect(env).toEqual({});
    expect(inheritedSocket({}, 4242)).toBeUndefined();
    expect(inheritedSocket({ LISTEN_FDS: '0' }, 4242)).toBeUndefined();
  });
});

describe('serve: --store', () => {
  it('a redis:// or rediss:// URL is Redis (named without its password), anything else a file', async () => {
    expect(isRedisUrl('redis://127.0.0.1:6379')).toBe(true);
    expect(isRedisUrl('REDISS://cache.example:6380/2')).toBe(true);
    expect(isRedisUrl('/var/lib/mcp/store.json')).toBe(false);
    const redis = cliStore('redis://user:s3cret@127.0.0.1:6399');
    expect(redis.name).toBe('redis 127.0.0.1:6399');
    const file = cliStore('/tmp/mcp-supervisor-store-test.json');
    expect(file.name).toBe('file /tmp/mcp-supervisor-store-test.json');
    await redis.close?.();
  });
});

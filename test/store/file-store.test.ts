import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreCorruptError } from '../../src/store/errors.js';
import { fileStore } from '../../src/store/index.js';
import { describeStoreContract } from './store-contract.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-store-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let n = 0;
describeStoreContract('fileStore()', async () => fileStore(join(dir, `contract-${++n}`, 'store.json')));

describe('fileStore(): the file', () => {
  it('is written 0600 in a directory created 0700, and holds what was set', async () => {
    const file = join(dir, 'modes', 'deeper', 'store.json');
    const store = fileStore(file);
    await store.set('k', { secret: 'rt-1' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'modes', 'deeper'))).mode & 0o777).toBe(0o700);
    expect(await fileStore(file).get('k')).toMatchObject({ value: { secret: 'rt-1' } });
  });

  it('a corrupt file rejects every operation with a StoreCorruptError naming it (never its contents), and is kept', async () => {
    const file = join(dir, 'corrupt.json');
    const contents = '{"version": 1, "entries": {"k": {"json": "at-SECRET"';
    await writeFile(file, contents);
    const store = fileStore(file);
    for (const operation of [
      () => store.get('k'),
      () => store.set('k', 1),
      () => store.delete('k'),
      () => store.lock('k', { leaseMs: 100 }),
    ]) {
      const error = await operation().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).not.toContain('SECRET');
    }
    await writeFile(file, '[1, 2]');
    await expect(store.get('k')).rejects.toThrow(/is not a store file/);
    expect(await readFile(file, 'utf8')).toBe('[1, 2]');
  });

  it('a lock is one holder across processes, and the fencing token grows across them', async () => {
    const file = join(dir, 'processes.json');
    const store = fileStore(file);
    const mine = await store.lock('shared', { leaseMs: 10_000 });
    // Another process: waits for the lease, reports its token.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import { fileStore } from './src/store/file-store.ts';
         const lease = await fileStore(${JSON.stringify(file)}).lock('shared', { leaseMs: 10000, waitMs: 15000 });
         console.log(JSON.stringify({ token: lease?.token }));
         await lease?.release();`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    // It cannot have the lease while this process holds it.
    await expect.poll(async () => (await readFile(file, 'utf8')).length).toBeGreaterThan(0);
    expect(out).toBe('');
    await mine!.release();
    expect(await exited).toBe(0);
    expect(JSON.parse(out).token).toBeGreaterThan(mine!.token);
    const after = await store.lock('shared', { leaseMs: 100 });
    expect(after!.token).toBeGreaterThan(JSON.parse(out).token);
    await after!.release();
  });
});

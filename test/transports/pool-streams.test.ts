/** Open streams never starve messages: more ready connections to one origin than the message pool has sockets. */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';

let fixture: HttpFixture | undefined;
const handles: ServerHandle[] = [];

afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
  await fixture?.close();
});

describe('stream pool', () => {
  it('140 ready connections to one origin, each holding its GET listener, still initialize and answer', async () => {
    fixture = await startHttpFixture();
    for (let i = 0; i < 140; i++) {
      handles.push(await connect({ url: fixture.url, keepalive: false, requestTimeoutMs: 5_000 }, { name: `c${i}` }));
    }
    expect(fixture.getStreamCount()).toBe(140);
    const last = handles.at(-1)!;
    expect((await last.callTool('echo', { text: 'still room' })).content[0]?.text).toBe('still room');
  }, 60_000);
});

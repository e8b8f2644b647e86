/**
 * The pieces of the stdio transport that need no process: line framing (bounded, `\r`-tolerant),
 * the stderr ring, the inherited environment, and the stdio config options.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseServerConfig } from '../../../src/index.js';
import { LineReader } from '../../../src/transports/stdio/line-reader.js';
import { MAX_STDERR_LINE_CHARS, StderrTail } from '../../../src/transports/stdio/stderr-tail.js';
import { stdioEnvironment } from '../../../src/transports/stdio/environment.js';

function reader(maxLineBytes = 64) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const r = new LineReader(maxLineBytes, {
    onLine: (line) => lines.push(line),
    onOversize: (bytes) => oversize.push(bytes),
  });
  return { r, lines, oversize };
}

describe('LineReader', () => {
  it('splits on \\n across chunk boundaries, strips a trailing \\r, skips blank lines', () => {
    const { r, lines } = reader();
    r.push(Buffer.from('{"a":1}\r\n{"b"'));
    r.push(Buffer.from(':2}\n\n  \r\n{"c":3}'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    r.push(Buffer.from('\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('decodes a multi-byte character split between chunks', () => {
    const { r, lines } = reader();
    const bytes = Buffer.from('"héllo ✓"\n');
    r.push(bytes.subarray(0, 3));
    r.push(bytes.subarray(3, 10));
    r.push(bytes.subarray(10));
    expect(lines).toEqual(['"héllo ✓"']);
  });

  it('a line over the limit is reported once and discarded up to the next newline; the next line is read', () => {
    const { r, lines, oversize } = reader(10);
    r.push(Buffer.from('short\n0123456'));
    r.push(Buffer.from('789abcdef'));
    r.push(Buffer.from('more and more and more'));
    expect(oversize).toHaveLength(1);
    r.push(Buffer.from(' end\nnext\n'));
    expect(lines).toEqual(['short', 'next']);
    expect(oversize).toHaveLength(1);
  });

  it('accepts a line of exactly the limit (a \\r before the newline does not count)', () => {
    const { r, lines, oversize } = reader(5);
    r.push(Buffer.from('12345\r\n123456\n'));
    expect(lines).toEqual(['12345']);
    expect(oversize).toHaveLength(1);
  });

  it('end() delivers a last line without a newline', () => {
    const { r, lines } = reader();
    r.push(Buffer.from('{"last":true}'));
    expect(lines).toEqual([]);
    r.end();
    expect(lines).toEqual(['{"last":true}']);
  });
});

describe('StderrTail', () => {
  it('keeps the last N lines, oldest first, with an unterminated last line', () => {
    const tail = new StderrTail(3);
    tail.push(Buffer.from('one\ntwo\r\nthree\nfour\nfi'));
    expect(tail.recent()).toEqual(['three', 'four', 'fi']);
    tail.push(Buffer.from('ve\n'));
    expect(tail.recent()).toEqual(['three', 'four', 'five']);
  });

  it('caps a very long line and keeps memory bounded', () => {
    const tail = new StderrTail(2);
    tail.push(Buffer.from('x'.repeat(MAX_STDERR_LINE_CHARS * 5)));
    tail.push(Buffer.from('y'.repeat(MAX_STDERR_LINE_CHARS * 5)));
    tail.push(Buffer.from('\nok\n'));
    const [long, ok] = tail.recent();
    expect(long!.length).toBe(MAX_STDERR_LINE_CHARS + 1);
    expect(long!.endsWith('…')).toBe(true);
    expect(ok).toBe('ok');
  });

  it('forwards each complete line; a throwing listener is ignored; tailLines 0 keeps nothing', () => {
    const seen: string[] = [];
    const tail = new StderrTail(0, (line) => {
      seen.push(line);
      throw new Error('logger broke');
    });
    tail.push(Buffer.from('a\nb\n'));
    tail.push(Buffer.from('c'));
    tail.end();
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(tail.recent()).toEqual([]);
  });
});

describe('stdio environment', () => {
  const parent = {
    HOME: '/home/u',
    PATH: '/bin',
    USER: 'u',
    SHELL: '/bin/sh',
    AWS_SECRET_ACCESS_KEY: 'secret',
    TERM: '() { :; }',
    NODE_OPTIONS: '--inspect',
  };

  it('inherits only the safe POSIX keys, skips shell functions, and puts the configured env on top', () => {
    expect(stdioEnvironment({ PATH: '/opt/bin', TOKEN: 't' }, parent, 'linux')).toEqual({
      HOME: '/home/u',
      PATH: '/opt/bin',
      USER: 'u',
      SHELL: '/bin/sh',
      TOKEN: 't',
    });
  });

  it('uses the Windows set on Windows', () => {
    const env = stdioEnvironment({}, { ...parent, USERPROFILE: 'C:\\Users\\u', SYSTEMROOT: 'C:\\Windows' }, 'win32');
    expect(env).toEqual({ PATH: '/bin', USERPROFILE: 'C:\\Users\\u', SYSTEMROOT: 'C:\\Windows' });
  });
});

describe('stdio config', () => {
  it('has shutdown and stderr defaults', () => {
    const config = parseServerConfig('files', { command: 'npx', args: ['-y', 'x'] });
    expect(config).toMatchObject({
      kind: 'command',
      type: 'stdio',
      shutdown: { closeStdinTimeoutMs: 2_000, sigtermTimeoutMs: 2_000 },
      stderr: { tailLines: 50, forward: false },
    });
  });

  it('accepts a forwarding function or inherit, and names the field of a bad value', () => {
    const forward = () => {};
    expect(parseServerConfig('a', { command: 'x', stderr: { forward } })).toMatchObject({ stderr: { forward } });
    expect(parseServerConfig('a', { command: 'x', stderr: { forward: 'inherit', tailLines: 0 } })).toMatchObject({
      stderr: { forward: 'inherit', tailLines: 0 },
    });
    const bad = (input: unknown) => {
      try {
        parseServerConfig('files', input);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).message;
      }
      throw new Error('expected a ConfigError');
    };
    expect(bad({ command: 'x', stderr: { forward: 'stdout' } })).toContain('servers.files.stderr.forward');
    expect(bad({ command: 'x', shutdown: { sigtermTimeoutMs: -1 } })).toContain(
      'servers.files.shutdown.sigtermTimeoutMs',
    );
    expect(bad({ command: 'x', shutdown: { graceMs: 1 } })).toContain('servers.files.shutdown');
  });
});

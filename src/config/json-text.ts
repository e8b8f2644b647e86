/**
 * JSON config text: VS Code's mcp.json allows comments and trailing commas (JSONC), and a
 * syntax error must be reported at its line and column — which V8's JSON.parse messages do not
 * always give ("Unexpected token '}', ... is not valid JSON" has no position).
 */
import { describeError } from '../core/errors.js';

export class JsonSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line}, column ${column}`);
    this.name = 'JsonSyntaxError';
  }
}

/** Parses JSON or JSONC; throws JsonSyntaxError with a 1-based line and column. */
export function parseJsonText(text: string): unknown {
  const plain = stripJsonc(text.replace(/^\uFEFF/, ' '));
  try {
    return JSON.parse(plain) as unknown;
  } catch (error) {
    const found = locateJsonError(plain) ?? {
      offset: plain.length,
      reason: describeError(error),
    };
    const { line, column } = lineAndColumn(plain, found.offset);
    throw new JsonSyntaxError(found.reason, line, column);
  }
}

/**
 * Replaces comments and trailing commas with spaces (newlines kept), so offsets in the result
 * are offsets in the original text.
 */
export function stripJsonc(text: string): string {
  const out = text.split('');
  let lastComma = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      i = endOfString(text, i);
      lastComma = -1;
    } else if (char === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') out[i++] = ' ';
    } else if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      for (; i < stop; i++) if (text[i] !== '\n') out[i] = ' ';
      i--;
    } else if (char === ',') {
      lastComma = i;
    } else if ((char === '}' || char === ']') && lastComma !== -1) {
      out[lastComma] = ' ';
      lastComma = -1;
    } else if (!/\s/.test(char)) {
      lastComma = -1;
    }
  }
  return out.join('');
}

/** Index of the closing quote of the string starting at `start` (or the end of the text). */
function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"' || text[i] === '\n') return i;
  }
  return text.length;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}

/** Where the scanner stopped, thrown out of its recursion. */
class SyntaxErrorAt extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A small strict JSON scanner: where the first syntax error is, and what it is. */
export function locateJsonError(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  const fail = (reason: string): never => {
    throw new SyntaxErrorAt(i, reason);
  };
  const ws = () => {
    while (i < text.length && /[ \t\r\n]/.test(text[i]!)) i++;
  };
  const describe = () => (i >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[i])}`);
  const expect = (char: string, what: string) => {
    ws();
    if (text[i] !== char)
      fail(`expected ${what}, found ${i >= text.length ? 'the end of input' : JSON.stringify(text[i])}`);
    i++;
  };
  const string = () => {
    if (text[i] !== '"') fail(`expected a double-quoted string, ${describe()}`);
    i++;
    while (i < text.length && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) fail('unescaped control character (a line break?) in a string');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape in a string');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail('bad escape in a string');
      }
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
  };
  const value = (): void => {
    ws();
    const char = text[i];
    if (char === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        string();
        expect(':', "':' after a property name");
        value();
        ws();
        if (text[i] === ',') i++;
        else return expect('}', "',' or '}' after a property value");
      }
    }
    if (char === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else return expect(']', "',' or ']' after an array element");
      }
    }
    if (char === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!literal) fail(`expected a value, ${describe()}`);
    i += literal![0].length;
    if (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) fail(`expected a value, ${describe()}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${JSON.stringify(text[i])} after the JSON value`);
    return undefined;
  } catch (found) {
    if (found instanceof SyntaxErrorAt) return { offset: found.offset, reason: found.reason };
    throw found;
  }
}

/** JSON and JSONC config text: comments, trailing commas, and where a syntax error is. */
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, locateJsonError, parseJsonText, stripJsonc } from '../../src/config/json-text.js';

function errorOf(text: string): JsonSyntaxError {
  try {
    parseJsonText(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error('parsed');
}

describe('json-text', () => {
  it('strips comments and trailing commas, keeping offsets; strings stay intact', () => {
    const text = '{"a": "//not a comment", /* c */ "b": [1, 2,], // end\n}';
    const stripped = stripJsonc(text);
    expect(stripped).toHaveLength(text.length);
    expect(JSON.parse(stripped)).toEqual({ a: '//not a comment', b: [1, 2] });
    expect(parseJsonText('{"url": "http://x/mcp",\n}')).toEqual({ url: 'http://x/mcp' });
    expect(parseJsonText('\uFEFF{"a":"x,]"}')).toEqual({ a: 'x,]' });
  });

  it.each([
    ['{"a": }', 1, 7, 'expected a value'],
    ['{\n  "a" 1\n}', 2, 7, "expected ':' after a property name"],
    ['{"a": 1', 1, 8, "expected ',' or '}' after a property value"],
    ['', 1, 1, 'expected a value, unexpected end of input'],
    ['{"a": "x\n"}', 1, 9, 'unescaped control character'],
    ['[1, 2', 1, 6, "expected ',' or ']'"],
    ['{"a": tru}', 1, 7, 'expected a value'],
    ['{"a": 1} x', 1, 10, 'after the JSON value'],
    ['{a: 1}', 1, 2, 'expected a double-quoted string'],
  ])('locates the error in %j at line %i, column %i', (text, line, column, reason) => {
    const error = errorOf(text);
    expect([error.line, error.column]).toEqual([line, column]);
    expect(error.reason).toContain(reason);
  });

  it('agrees with JSON.parse on valid documents', () => {
    for (const text of ['{}', '[]', '{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"]}', ' 3 ', '"s"']) {
      expect(locateJsonError(text)).toBeUndefined();
      expect(parseJsonText(text)).toEqual(JSON.parse(text));
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parseBearerChallenge, parseWwwAuthenticate } from '../../../src/auth/www-authenticate.js';

describe('parseWwwAuthenticate', () => {
  it('reads a Bearer challenge with quoted and token parameters', () => {
    expect(parseWwwAuthenticate('Bearer realm="mcp", error=invalid_token, scope="a b"')).toEqual([
      { scheme: 'Bearer', params: { realm: 'mcp', error: 'invalid_token', scope: 'a b' } },
    ]);
  });

  it('splits several challenges and keeps token68 credentials', () => {
    const parsed = parseWwwAuthenticate(
      'Basic abc+/def==, Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", DPoP algs="ES256"',
    );
    expect(parsed.map((c) => c.scheme)).toEqual(['Basic', 'Bearer', 'DPoP']);
    expect(parsed[0]!.token68).toBe('abc+/def==');
    expect(parsed[1]!.params['resource_metadata']).toBe('https://x/.well-known/oauth-protected-resource');
    expect(parsed[2]!.params['algs']).toBe('ES256');
  });

  it('unescapes quoted strings and keeps commas inside them', () => {
    const [c] = parseWwwAuthenticate('Bearer error_description="bad \\"token\\", try again", scope="x"');
    expect(c!.params).toEqual({ error_description: 'bad "token", try again', scope: 'x' });
  });

  it('lower-cases parameter names, first occurrence wins', () => {
    expect(parseWwwAuthenticate('bearer SCOPE="one", scope="two"')[0]!.params).toEqual({ scope: 'one' });
  });

  it('survives junk and unterminated strings', () => {
    expect(() => parseWwwAuthenticate('=,,"" Bearer scope="unterminated')).not.toThrow();
    expect(
      parseWwwAuthenticate('=,,"" Bearer scope="unterminated').find((c) => c.scheme === 'Bearer')?.params['scope'],
    ).toBe('unterminated');
    expect(parseWwwAuthenticate('')).toEqual([]);
    expect(parseWwwAuthenticate(undefined)).toEqual([]);
    expect(parseWwwAuthenticate('Bearer')).toEqual([{ scheme: 'Bearer', params: {} }]);
  });
});

describe('parseBearerChallenge', () => {
  it('picks the Bearer challenge among others', () => {
    expect(
      parseBearerChallenge(
        'Basic realm="x", Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://h/prm", error_description="more"',
      ),
    ).toEqual({
      error: 'insufficient_scope',
      scope: 'mcp:basic mcp:write',
      resourceMetadata: 'http://h/prm',
      errorDescription: 'more',
    });
  });

  it('is empty without a Bearer challenge', () => {
    expect(parseBearerChallenge('Basic realm="x"')).toEqual({});
  });
});

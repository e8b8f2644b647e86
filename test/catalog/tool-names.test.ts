import { describe, expect, it } from 'vitest';
import { assignNames, baseName, sanitizeName, TOOL_NAME_PATTERN } from '../../src/catalog/tool-names.js';
import { isToolAllowed, resolveCatalogOptions } from '../../src/catalog/options.js';
import { ConfigError } from '../../src/core/errors.js';

describe('exposed tool names', () => {
  it('prefixes with the server and replaces characters providers refuse', () => {
    expect(baseName({ server: 'docs', tool: 'search', prefix: 'docs' }, '__')).toBe('docs__search');
    expect(baseName({ server: 'my.files', tool: 'read/file v2', prefix: 'my.files' }, '__')).toBe(
      'my_files__read_file_v2',
    );
    expect(baseName({ server: 'a', tool: 'search', prefix: undefined }, '__')).toBe('search');
    expect(sanitizeName('')).toBe('_');
  });

  it('cuts long names to 64 characters with a stable hash of the original names', () => {
    const tool = 'x'.repeat(100);
    const first = baseName({ server: 's', tool, prefix: 's' }, '__');
    expect(first).toHaveLength(64);
    expect(first).toMatch(TOOL_NAME_PATTERN);
    expect(baseName({ server: 's', tool, prefix: 's' }, '__')).toBe(first);
    expect(baseName({ server: 's', tool: `${tool}y`, prefix: 's' }, '__')).not.toBe(first);
  });

  it('resolves collisions by server then tool name, whatever the input order', () => {
    const sources = [
      { server: 'beta', tool: 'search', prefix: undefined },
      { server: 'alpha', tool: 'search', prefix: undefined },
      { server: 'alpha', tool: 'search_2', prefix: undefined },
      { server: 'gamma', tool: 'search', prefix: undefined },
    ];
    const names = assignNames(sources, '__');
    // alpha's search keeps the name; the tool really named search_2 keeps its own name too.
    expect(names).toEqual(['search_3', 'search', 'search_2', 'search_4']);
    expect(assignNames([...sources].reverse(), '__')).toEqual([...names].reverse());
    expect(new Set(names).size).toBe(names.length);
  });

  it('keeps suffixed long names within 64 characters', () => {
    const tool = 'y'.repeat(80);
    const names = assignNames(
      [
        { server: 'a', tool, prefix: undefined },
        { server: 'b', tool, prefix: undefined },
      ],
      '__',
    );
    expect(names[0]).not.toBe(names[1]);
    for (const name of names) expect(name).toMatch(TOOL_NAME_PATTERN);
  });
});

describe('catalog options', () => {
  it('filters by allow, then deny, with names and regular expressions', () => {
    const options = { allow: [/^get-/, 'echo'], deny: ['get-env'] };
    expect(isToolAllowed(options, 'echo')).toBe(true);
    expect(isToolAllowed(options, 'get-sum')).toBe(true);
    expect(isToolAllowed(options, 'get-env')).toBe(false);
    expect(isToolAllowed(options, 'toggle')).toBe(false);
    expect(isToolAllowed({ deny: [/g/g] }, 'go')).toBe(false);
    expect(isToolAllowed({ deny: [/g/g] }, 'go')).toBe(false);
  });

  it('refuses bad options with a ConfigError naming the field', () => {
    expect(() => resolveCatalogOptions({ separator: '.' })).toThrow(ConfigError);
    expect(() => resolveCatalogOptions({ separator: '.' })).toThrow(/separator/);
    expect(() => resolveCatalogOptions({ servers: { docs: { allow: [3 as unknown as string] } } })).toThrow(
      /servers\.docs\.allow\[0\]/,
    );
    expect(() => resolveCatalogOptions({ servers: { docs: { prefix: '' } } })).toThrow(/servers\.docs\.prefix/);
    expect(() => resolveCatalogOptions({ listTimeoutMs: -1 })).toThrow(/listTimeoutMs/);
  });
});

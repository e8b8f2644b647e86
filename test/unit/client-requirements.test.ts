/**
 * Test titles cite the client requirements by number (`§41`, `§41c`, `§1.7`); each must name an
 * item or a section of docs/client-requirements.md, so a reader can look it up. Titles are read
 * from the syntax tree of every test file: the first argument of `it`, `test` and `describe`
 * (with `.each`, `.only`, … too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = join(ROOT, 'docs', 'client-requirements.md');
const CITATION = /§(\d+(?:\.\d+)?[a-z]?)/g;

/** `§N` items (`- **§41** …`, `- **§41a** …`) and `§1.N` sections (`### §1.7 …`) the page defines. */
function definedInDoc(markdown: string): Set<string> {
  const defined = new Set<string>();
  for (const [, id] of markdown.matchAll(/^\s*- \*\*§(\d+[a-z]?)\*\*/gm)) defined.add(id!);
  for (const [, id] of markdown.matchAll(/^#{2,4} §(\d+\.\d+)\s/gm)) defined.add(id!);
  return defined;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const TEST_FUNCTIONS = new Set(['it', 'test', 'describe']);

/** The name a call chain starts with: `it.each([...])` → `it`, `describe.only` → `describe`. */
function rootName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return rootName(expression.expression);
  if (ts.isCallExpression(expression)) return rootName(expression.expression);
  return undefined;
}

/** Titles of the tests and suites in a source text. */
function titlesIn(fileName: string, source: string): string[] {
  if (!source.includes('§')) return [];
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest);
  const titles: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && TEST_FUNCTIONS.has(rootName(node.expression) ?? '')) {
      const first = node.arguments[0];
      if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) titles.push(first.text);
      else if (first && ts.isTemplateExpression(first)) titles.push(first.getText(file));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return titles;
}

/** Citations in test titles that the page does not define, as `file: §N in "title"`. */
function unresolved(defined: Set<string>, files: string[]): string[] {
  return files.flatMap((path) =>
    titlesIn(path, readFileSync(path, 'utf8')).flatMap((title) =>
      [...title.matchAll(CITATION)]
        .map(([, id]) => id!)
        .filter((id) => !defined.has(id))
        .map((id) => `${relative(ROOT, path)}: §${id} in "${title}"`),
    ),
  );
}

describe('docs/client-requirements.md', () => {
  const defined = definedInDoc(readFileSync(DOC, 'utf8'));

  it('defines items §1-§67 (with §41a-§41e) and sections §1.1-§1.16', () => {
    for (let n = 1; n <= 67; n++) expect(defined, `§${n}`).toContain(String(n));
    for (const part of 'abcde') expect(defined, `§41${part}`).toContain(`41${part}`);
    for (let n = 1; n <= 16; n++) expect(defined, `§1.${n}`).toContain(`1.${n}`);
  });

  it('every § cited in a test title names an item or a section of the page', () => {
    const files = testFiles(join(ROOT, 'test'));
    const cited = files.flatMap((path) => titlesIn(path, readFileSync(path, 'utf8'))).filter((t) => t.includes('§'));
    expect(cited.length).toBeGreaterThan(100); // the titles were found
    expect(unresolved(defined, files)).toEqual([]);
  });

  it('the check itself: a title citing an item the page lacks is reported, with its file', () => {
    const source = `describe('x (§1.99)', () => { it.each([1])('§999 %s', () => {}); it(\`§41z\`, () => {}); });`;
    const titles = titlesIn('fake.test.ts', source);
    expect(titles).toEqual(['x (§1.99)', '§999 %s', '§41z']);
    const missing = titles
      .flatMap((t) => [...t.matchAll(CITATION)].map(([, id]) => id!))
      .filter((id) => !defined.has(id));
    expect(missing).toEqual(['1.99', '999', '41z']);
  });
});

/**
 * A skills host (the `io.modelcontextprotocol/skills` extension, SEP-2640) on the public API only:
 * the runtime has no skills support of its own, so the conformance client shows what a host built
 * on `request()` and `readResource()` does. `skills/list` reads no file; loading a skill reads its
 * SKILL.md, verifies size, digest and frontmatter against the listed entry, and reads the
 * supporting files only once the SKILL.md passed.
 */
import { createHash } from 'node:crypto';
import type { ServerHandle } from '../../src/index.js';

interface SkillFile {
  uri: string;
  digest: string;
  size: number;
}

interface SkillEntry {
  uri: string;
  frontmatter: Record<string, string>;
  resources: SkillFile[];
}

export async function listSkills(server: ServerHandle): Promise<SkillEntry[]> {
  const { skills } = await server.request<{ skills: SkillEntry[] }>('skills/list', {});
  return skills;
}

/** Loads a skill; throws, naming the check, when its SKILL.md does not match the entry. */
export async function loadSkill(server: ServerHandle, entry: SkillEntry): Promise<string[]> {
  const skillMd = await verifiedText(server, entry, entry.uri);
  const frontmatter = parseFrontmatter(skillMd);
  for (const [field, value] of Object.entries(entry.frontmatter))
    if (frontmatter[field] !== value)
      throw new Error(`skill ${entry.uri}: frontmatter field "${field}" differs from the listed entry`);
  const others = entry.resources.filter((file) => file.uri !== entry.uri);
  return [skillMd, ...(await Promise.all(others.map((file) => verifiedText(server, entry, file.uri))))];
}

async function verifiedText(server: ServerHandle, entry: SkillEntry, uri: string): Promise<string> {
  const listed = entry.resources.find((file) => file.uri === uri);
  if (!listed) throw new Error(`skill ${entry.uri}: ${uri} is not among its listed files`);
  const { contents } = await server.readResource(uri);
  const text = contents.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('');
  if (Buffer.byteLength(text) !== listed.size)
    throw new Error(`skill ${entry.uri}: ${uri} is ${Buffer.byteLength(text)} bytes, the entry says ${listed.size}`);
  const digest = `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
  if (digest !== listed.digest) throw new Error(`skill ${entry.uri}: ${uri} does not match its digest`);
  return text;
}

/** The `key: value` lines between the leading `---` fences (the fields SKILL.md entries carry). */
function parseFrontmatter(markdown: string): Record<string, string> {
  const block = /^---\n([\s\S]*?)\n---/.exec(markdown)?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const match = /^([\w-]+):\s*(.*)$/.exec(line);
    if (match) fields[match[1]!] = match[2]!.trim();
  }
  return fields;
}

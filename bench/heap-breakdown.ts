/**
 * Where the idle heap goes: the objects of a heap snapshot taken after `n` connections opened that
 * were not in the one taken before (V8 keeps object ids across snapshots of one process), grouped
 * by kind and constructor (or function name for closures), self sizes, per connection.
 *
 *   IDLE_HEAP_SNAPSHOTS=/tmp/ours node --expose-gc .bench-build/bench/idle-heap.js ours-defaults json <url> 300
 *   node .bench-build/bench/heap-breakdown.js /tmp/ours 300 [rows]
 *
 * Prints a markdown table: kind, name, objects per connection, bytes per connection.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Node {
  kind: string;
  name: string;
  size: number;
}

function read(file: string): Map<number, Node> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const kinds = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const [type, name, id, size] = ['type', 'name', 'id', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
    number,
  ];
  const nodes = new Map<number, Node>();
  for (let i = 0; i < data.nodes.length; i += width) {
    nodes.set(data.nodes[i + id]!, {
      kind: kinds[data.nodes[i + type]!]!,
      name: data.strings[data.nodes[i + name]!]!,
      size: data.nodes[i + size]!,
    });
  }
  return nodes;
}

/** A readable group name: strings and numbers by kind only (their text is the data, not the owner). */
function groupOf(node: Node): string {
  if (node.kind === 'string' || node.kind === 'concatenated string' || node.kind === 'sliced string')
    return 'string\t(strings)';
  if (node.kind === 'number' || node.kind === 'heap number') return 'number\t(numbers)';
  const name = node.name.length > 60 ? `${node.name.slice(0, 57)}...` : node.name;
  return `${node.kind}\t${name.replaceAll('|', '/').replaceAll('\n', ' ')}`;
}

export function breakdown(prefix: string, n: number): { rows: [string, number, number][]; total: number } {
  const before = read(`${prefix}-before.heapsnapshot`);
  const after = read(`${prefix}-after.heapsnapshot`);
  const groups = new Map<string, [number, number]>();
  let total = 0;
  for (const [id, node] of after) {
    if (before.has(id)) continue;
    const key = groupOf(node);
    const entry = groups.get(key) ?? [0, 0];
    entry[0]++;
    entry[1] += node.size;
    groups.set(key, entry);
    total += node.size;
  }
  const rows = [...groups].map(([key, [count, size]]): [string, number, number] => [key, count / n, size / n]);
  rows.sort((a, b) => b[2] - a[2]);
  return { rows, total: total / n };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [prefix, n, limit] = process.argv.slice(2);
  const { rows, total } = breakdown(prefix!, Number(n));
  const lines = ['| kind | name | objects/conn | bytes/conn |', '|---|---|---|---|'];
  for (const [key, count, size] of rows.slice(0, Number(limit ?? 40))) {
    const [kind, name] = key.split('\t');
    lines.push(`| ${kind} | ${name} | ${count.toFixed(1)} | ${size.toFixed(0)} |`);
  }
  lines.push(`| all | (new objects) | | ${total.toFixed(0)} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

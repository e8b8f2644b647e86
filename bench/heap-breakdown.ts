/**
 * Where the idle heap goes: the objects of a heap snapshot taken after `n` connections opened that
 * were not in the one taken before (V8 keeps object ids across snapshots of one process), grouped
 * by kind and constructor (or function name for closures), self sizes, per connection.
 *
 *   IDLE_HEAP_SNAPSHOTS=/tmp/ours node --expose-gc .bench-build/bench/idle-heap.js ours-defaults json <url> 300
 *   node .bench-build/bench/heap-breakdown.js /tmp/ours 300 [rows]
 *
 * Prints a markdown table: kind, name, objects per connection, bytes per connection. With `owner`
 * as a fourth argument, groups instead by owner: each new object is counted under the nearest
 * object with a class name (not `Object`, `Array`, `Map`, …) up its chain of first retainers,
 * compiled code left out (an approximation: an object held by two owners counts for the first).
 *
 *   node .bench-build/bench/heap-breakdown.js /tmp/ours 300 40 owner
 *   node .bench-build/bench/heap-breakdown.js /tmp/ours 300 40 owner Supervisor   (that owner's objects by kind and name)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
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

/** Constructor names that say nothing of who holds an object. */
const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'Promise', '']);

const named = (kind: string, name: string) => kind === 'object' && !GENERIC.has(name) && !name.startsWith('system');

/**
 * New objects' bytes by owner (see the head of the file): [owner, objects, bytes] per connection.
 * With `only`, the objects of that one owner instead, by kind and name (what a `Supervisor` holds).
 */
export function byOwner(prefix: string, n: number, only?: string): { rows: [string, number, number][]; total: number } {
  const before = new Set(read(`${prefix}-before.heapsnapshot`).keys());
  const data = JSON.parse(readFileSync(`${prefix}-after.heapsnapshot`, 'utf8')) as Snapshot;
  const meta = data.snapshot.meta;
  const width = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const [type, name, id, size, edgeCount] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number, number];
  const [edgeType, toNode] = ['type', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number];
  const count = data.nodes.length / width;
  const kindOf = (i: number) => meta.node_types[0][data.nodes[i * width + type]!]!;
  const nameOf = (i: number) => data.strings[data.nodes[i * width + name]!]!;
  const isNew = (i: number) => !before.has(data.nodes[i * width + id]!);
  // The first strong retainer of each new object.
  const retainer = new Int32Array(count).fill(-1);
  let edge = 0;
  for (let i = 0; i < count; i++) {
    for (let k = data.nodes[i * width + edgeCount]!; k > 0; k--, edge += edgeWidth) {
      const to = data.edges[edge + toNode]! / width;
      if (meta.edge_types[0][data.edges[edge + edgeType]!] !== 'weak' && retainer[to] === -1 && isNew(to))
        retainer[to] = i;
    }
  }
  const ownerOf = (i: number): string => {
    if (named(kindOf(i), nameOf(i))) return nameOf(i);
    let at = i;
    for (let depth = 0; depth < 12; depth++) {
      at = retainer[at]!;
      if (at === -1) return '(held by old objects)';
      if (!isNew(at)) return `(held by old ${nameOf(at) || kindOf(at)})`;
      if (named(kindOf(at), nameOf(at))) return nameOf(at);
    }
    return '(unnamed chain)';
  };
  const groups = new Map<string, [number, number]>();
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (!isNew(i) || kindOf(i) === 'code') continue;
    const owner = ownerOf(i);
    if (only !== undefined && owner !== only) continue;
    const key = only === undefined ? owner : `${kindOf(i)} ${nameOf(i).slice(0, 50).replaceAll('|', '/')}`;
    const entry = groups.get(key) ?? [0, 0];
    entry[0]++;
    entry[1] += data.nodes[i * width + size]!;
    groups.set(key, entry);
    total += data.nodes[i * width + size]!;
  }
  const rows = [...groups].map(([owner, [objects, bytes]]): [string, number, number] => [
    owner,
    objects / n,
    bytes / n,
  ]);
  rows.sort((a, b) => b[2] - a[2]);
  return { rows, total: total / n };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[5] === 'owner') {
  const [prefix, n, limit, , only] = process.argv.slice(2);
  const { rows, total } = byOwner(prefix!, Number(n), only);
  const lines = ['| owner | objects/conn | bytes/conn |', '|---|---|---|'];
  for (const [owner, objects, bytes] of rows.slice(0, Number(limit ?? 40)))
    lines.push(`| ${owner} | ${objects.toFixed(1)} | ${bytes.toFixed(0)} |`);
  lines.push(`| all | (new objects, code left out) | ${total.toFixed(0)} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
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

#!/usr/bin/env node
/**
 * A small MCP server over stdio for the stdio transport tests: plain Node, no dependencies.
 * Answers initialize (echoing a supported protocol version), ping, tools/list and tools/call
 * (tools: echo, pid, sleep, and emit: writes `arguments.chunks`, base64 each, to stdout as
 * separate writes, then a newline, then its answer: hostile stdout for the fuzz suite).
 * Switches (argv):
 *
 *   --crash-after N      exit 3 on the request after N answered requests (initialize not counted)
 *   --crash-linger MS    with --crash-after: stay MS ms (answering nothing) before that exit, so
 *                        lines written just after the crashing one reach the pipe first
 *   --hang-after N       stop answering after N answered requests (initialize not counted), pings included
 *   --garbage            print a non-JSON line to stdout before every response
 *   --crlf               end responses with \r\n
 *   --ignore-sigterm     log and ignore SIGTERM
 *   --linger             keep running after stdin closes (default: exit 0 on stdin EOF)
 *   --grandchild         spawn a long-running grandchild in the same process group (it inherits
 *                        stdout and stderr, as npx's children do) and print "grandchild pid N" to stderr
 *   --huge-line BYTES    print one stdout line of BYTES bytes before the first tools/call response
 *   --exit-at-once CODE  print a line to stderr and exit with CODE at start
 *   --stderr-lines N     print N lines to stderr at start
 *   --call-log FILE      append one line per tools/call it runs (pid and arguments.text) to FILE
 *   --tag TEXT           ignored; lets a test find its processes by command line
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name) => {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
};

const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const crashAfter = option('--crash-after') === undefined ? undefined : Number(option('--crash-after'));
const hangAfter = option('--hang-after') === undefined ? undefined : Number(option('--hang-after'));
const hugeLine = option('--huge-line') === undefined ? undefined : Number(option('--huge-line'));
const newline = flag('--crlf') ? '\r\n' : '\n';
let answered = 0;
let hugeSent = false;

const log = (line) => process.stderr.write(`${line}\n`);

if (option('--exit-at-once') !== undefined) {
  log('fixture: refusing to start (--exit-at-once)');
  process.exit(Number(option('--exit-at-once')));
}

for (let i = 1; i <= Number(option('--stderr-lines') ?? 0); i++) log(`stderr line ${i}`);

if (flag('--ignore-sigterm')) process.on('SIGTERM', () => log('fixture: ignoring SIGTERM'));

if (flag('--grandchild')) {
  const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...argv], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  log(`grandchild pid ${grandchild.pid}`);
}

function write(message) {
  if (flag('--garbage')) process.stdout.write(`this line is not JSON${newline}`);
  process.stdout.write(`${JSON.stringify(message)}${newline}`);
}

function toolResult(name, args) {
  switch (name) {
    case 'echo':
      return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
    case 'pid':
      return { content: [{ type: 'text', text: String(process.pid) }] };
    default:
      return undefined;
  }
}

async function answer(request) {
  const { id, method, params } = request;
  if (method === 'initialize') {
    const requested = params?.protocolVersion;
    return {
      protocolVersion: SUPPORTED.includes(requested) ? requested : SUPPORTED[1],
      capabilities: { tools: {} },
      serverInfo: { name: 'stdio-fixture', version: '1.0.0' },
    };
  }
  if (crashAfter !== undefined && answered >= crashAfter) {
    log(`fixture: crashing after ${answered} requests (request ${id} was '${method}')`);
    const linger = Number(option('--crash-linger') ?? 0);
    if (linger > 0) {
      setTimeout(() => process.exit(3), linger);
      return new Promise(() => {});
    }
    process.exit(3);
  }
  if (hangAfter !== undefined && answered >= hangAfter) {
    log(`fixture: hanging after ${answered} requests`);
    return new Promise(() => {});
  }
  answered++;
  if (method === 'ping') return {};
  if (method === 'tools/list') {
    return {
      tools: ['echo', 'pid', 'sleep'].map((name) => ({
        name,
        description: `the ${name} tool`,
        inputSchema: { type: 'object' },
      })),
    };
  }
  if (method === 'tools/call') {
    if (option('--call-log') !== undefined)
      appendFileSync(option('--call-log'), `${process.pid} ${String(params?.arguments?.text ?? '')}\n`);
    if (hugeLine !== undefined && !hugeSent) {
      hugeSent = true;
      process.stdout.write(`${'x'.repeat(hugeLine)}\n`);
    }
    if (params?.name === 'emit') {
      for (const chunk of params.arguments?.chunks ?? []) process.stdout.write(Buffer.from(chunk, 'base64'));
      process.stdout.write('\n');
      return { content: [{ type: 'text', text: 'emitted' }] };
    }
    if (params?.name === 'sleep') {
      await new Promise((resolve) => setTimeout(resolve, Number(params.arguments?.ms ?? 0)));
      return { content: [{ type: 'text', text: 'slept' }] };
    }
    const result = toolResult(params?.name, params?.arguments);
    if (result) return result;
    throw Object.assign(new Error(`unknown tool ${params?.name}`), { code: -32602 });
  }
  throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return;
  }
  if (message.method === undefined || message.id === undefined) return; // responses and notifications
  answer(message).then(
    (result) => write({ jsonrpc: '2.0', id: message.id, result }),
    (error) => write({ jsonrpc: '2.0', id: message.id, error: { code: error.code ?? -32603, message: error.message } }),
  );
});
lines.on('close', () => {
  log('fixture: stdin closed');
  if (flag('--linger')) setInterval(() => {}, 60_000);
  else process.exit(0);
});

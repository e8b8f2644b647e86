/**
 * A server built with the official v2 server package whose tools ask the client for input the
 * 2026-07-28 way (multi round-trip requests, `inputRequired(...)`), written the way its
 * `inputRequired` documentation shows. Test fixture code.
 *
 * - `greet`: one round (a form elicitation for a name).
 * - `poem`: two rounds (a topic by elicitation, then a line by sampling, the topic carried in
 *   `requestState`), then the roots in a third.
 *
 * - prompt `review` and resource `mrtr://secret`: one elicitation round each.
 *
 * Run as a script (`node --import tsx servers/v2-mrtr-server.ts`) it serves stdio, modern only.
 */
import { fileURLToPath } from 'node:url';
import { acceptedContent, inputRequired, inputResponse, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export function buildMrtrServer(name: string): McpServer {
  const server = new McpServer({ name, version: '2.0.0' });
  server.registerTool(
    'greet',
    { description: 'Greets whoever the user says', inputSchema: z.object({}) },
    (_args, ctx) => {
      const answer = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'name');
      if (!answer)
        return inputRequired({
          inputRequests: {
            name: inputRequired.elicit({
              message: 'Your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            }),
          },
        });
      return { content: [{ type: 'text', text: `hello ${answer.name} (pid ${process.pid})` }] };
    },
  );
  server.registerTool('poem', { description: 'Writes a line on a topic', inputSchema: z.object({}) }, (_args, ctx) => {
    const state = ctx.mcpReq.requestState<string>();
    const responses = ctx.mcpReq.inputResponses;
    if (state === undefined) {
      const topic = acceptedContent<{ topic: string }>(responses, 'topic');
      if (!topic)
        return inputRequired({
          inputRequests: {
            topic: inputRequired.elicit({
              message: 'Topic?',
              requestedSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
            }),
          },
        });
      return inputRequired({
        inputRequests: {
          line: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `a line about ${topic.topic}` } }],
            maxTokens: 20,
          }),
        },
        requestState: `topic:${topic.topic}`,
      });
    }
    const line = inputResponse(responses, 'line');
    if (line.kind === 'sampling' && !state.includes('|'))
      return inputRequired({
        inputRequests: { roots: inputRequired.listRoots() },
        requestState: `${state}|line:${textOf(line.result.content)}`,
      });
    const roots = inputResponse(responses, 'roots');
    const where = roots.kind === 'roots' ? roots.roots.map((r) => r.uri).join(',') : 'nowhere';
    return { content: [{ type: 'text', text: `${state} @ ${where}` }] };
  });
  const askName = (message: string) =>
    inputRequired({
      inputRequests: {
        name: inputRequired.elicit({
          message,
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        }),
      },
    });
  server.registerPrompt('review', { description: 'A review prompt for someone' }, (ctx) => {
    const answer = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'name');
    if (!answer) return askName('Reviewer?');
    return { messages: [{ role: 'user', content: { type: 'text', text: `review by ${answer.name}` } }] };
  });
  server.registerResource('secret', 'mrtr://secret', { description: 'Readable once a name is given' }, (uri, ctx) => {
    const answer = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'name');
    if (!answer) return askName('Reader?');
    return { contents: [{ uri: uri.href, text: `for ${answer.name}` }] };
  });
  return server;
}

function textOf(content: unknown): string {
  const block = Array.isArray(content) ? content[0] : content;
  return (block as { text?: string } | undefined)?.text ?? '';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  serveStdio(() => buildMrtrServer('v2-mrtr-stdio'), { legacy: 'reject' });
}

/**
 * Server-to-client requests (elicitation, sampling, roots) put to the application's client: each
 * goes to its `onmessage` under an id of the transport's own (`mcp-supervisor:N`, never one of the
 * client's), and the client's answer, which it sends back through the transport, settles it. When
 * the server cancels, the client is told with `notifications/cancelled`.
 */
import { ConnectionClosedError } from '../../index.js';
import { errorFrom, type MessageId, type WireMessage } from './wire.js';

interface Waiting {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

export class ClientAsks {
  private next = 0;
  private readonly waiting = new Map<MessageId, Waiting>();

  constructor(private readonly deliver: (message: WireMessage) => void) {}

  ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    const id = `mcp-supervisor:${++this.next}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.waiting.delete(id)) return;
        this.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
        reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled by the server'));
      };
      this.waiting.set(id, {
        resolve: (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.deliver({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** The client's answer to one of ours: true when it was one (and it is consumed). */
  answer(message: WireMessage): boolean {
    const id = message.id;
    if (id === undefined || id === null) return false;
    const waiting = this.waiting.get(id);
    if (!waiting) return false;
    this.waiting.delete(id);
    if (message.error) waiting.reject(errorFrom(message.error));
    else waiting.resolve((message.result ?? {}) as Record<string, unknown>);
    return true;
  }

  /** The transport closed: nobody will answer. */
  closeAll(server: string): void {
    for (const waiting of this.waiting.values())
      waiting.reject(new ConnectionClosedError('the client closed the transport', { server }));
    this.waiting.clear();
  }
}

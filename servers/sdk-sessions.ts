/**
 * The session map of the official SDK's Streamable HTTP examples: one transport per session id,
 * stored when its session is initialized, dropped when it closes. `closeAll()` is what a
 * restart does to it: every session ends, and a session still initializing lands in the old
 * map, never in the new one.
 */
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export class SdkSessions {
  private transports = new Map<string, StreamableHTTPServerTransport>();

  get size(): number {
    return this.transports.size;
  }

  /** The transport of a live session; none for no id or an unknown one. */
  get(sessionId: string | undefined): StreamableHTTPServerTransport | undefined {
    return sessionId === undefined ? undefined : this.transports.get(sessionId);
  }

  /** A transport for a new session (an initialize request without a session id); connect a server to it. */
  create(
    options: { enableJsonResponse?: boolean; onInitialized?: (id: string) => void } = {},
  ): StreamableHTTPServerTransport {
    const transports = this.transports;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: options.enableJsonResponse,
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        options.onInitialized?.(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    return transport;
  }

  /** Ends every session: their ids are unknown from now on. */
  async closeAll(): Promise<void> {
    const old = this.transports;
    this.transports = new Map();
    await Promise.allSettled([...old.values()].map((transport) => transport.close()));
  }
}

/** A Server-Sent Events reader for the dashboard tests: every frame kept, the raw text too. */
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';

export interface Frame {
  event: string;
  data: unknown;
}

export interface SseReader {
  frames: Frame[];
  /** Everything received, as text (for the secrets scan). */
  text(): string;
  response: IncomingMessage;
  close(): void;
}

export function readEvents(url: string): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream' } }, (response) => {
      const frames: Frame[] = [];
      let raw = '';
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        raw += chunk;
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n\n')) !== -1) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) frames.push({ event, data: JSON.parse(data) as unknown });
        }
      });
      response.on('error', () => {});
      resolve({ frames, text: () => raw, response, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A plain request with any headers (fetch cannot set Host). */
export function get(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Whether a TCP connection to host:port opens. A server bound to 127.0.0.1 is not reached at
 * 127.0.0.2 (another loopback address); one bound to every interface is.
 */
export function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

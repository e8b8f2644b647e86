// The HTTP fixture's GET streams: the server-to-client SSE channel, its resumption by
// Last-Event-ID, server pushes, and closing a session's streams.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { endSse, startSse, writeSseMessage, writeSsePriming } from '../sse-writer.js';
import type { FixtureContext, GetMode } from './faults.js';
import type { SessionTable } from './sessions.js';
import { header, rpcError, sendJson } from './wire.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict: Only one SSE stream is allowed per session',
};

interface GetStream {
  res: ServerResponse;
  session: string | undefined;
}

export interface GetStreams {
  handleGet(req: IncomingMessage, res: ServerResponse): void;
  /** Send a message on every open stream; false when none took it. */
  push(message: object): boolean;
  /** End the streams of one session (it was deleted). */
  endSession(sid: string): void;
  closeAll(): void;
  count(): number;
}

export function createGetStreams(
  ctx: FixtureContext,
  sessions: SessionTable,
  getMode: GetMode | undefined,
): GetStreams {
  const streams = new Set<GetStream>();
  const closeAll = (): void => {
    for (const s of streams) endSse(s.res);
    streams.clear();
  };
  return {
    handleGet(req, res) {
      const mode = ctx.faults.getMode ?? getMode ?? 'sse';
      if (mode !== 'sse') {
        sendJson(
          res,
          mode,
          rpcError(null, -32000, STATUS_TEXT[mode] ?? 'Error'),
          mode === 405 ? { allow: 'POST, DELETE' } : {},
        );
        return;
      }
      if (!(header(req, 'accept') ?? '').includes('text/event-stream')) {
        sendJson(res, 406, rpcError(null, -32000, 'Not Acceptable: Client must accept text/event-stream'));
        return;
      }
      const sid = sessions.check(req, res);
      if (sid === false) return;
      startSse(res);
      const stream: GetStream = { res, session: sid };
      streams.add(stream);
      res.on('close', () => streams.delete(stream));
      const lastEventId = header(req, 'last-event-id');
      const pending = lastEventId !== undefined ? ctx.pendingResumes.get(lastEventId) : undefined;
      if (lastEventId !== undefined && pending) {
        ctx.pendingResumes.delete(lastEventId);
        void pending.then((msg) => writeSseMessage(res, msg, ctx.nextEventId(), ctx.faults.retryMs));
      } else {
        writeSsePriming(res, ctx.nextEventId(), ctx.faults.retryMs);
      }
    },
    push(message) {
      let sent = 0;
      for (const s of streams) if (writeSseMessage(s.res, message, ctx.nextEventId(), ctx.faults.retryMs)) sent++;
      return sent > 0;
    },
    endSession(sid) {
      for (const s of [...streams]) {
        if (s.session === sid) {
          streams.delete(s);
          endSse(s.res);
        }
      }
    },
    closeAll,
    count: () => streams.size,
  };
}

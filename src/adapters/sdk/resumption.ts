/**
 * A client's `send(message, { resumptionToken })`: it asks to resume the response stream of a
 * request an earlier connection sent (the SDK's own transport GETs it with `Last-Event-ID`). The
 * supervised connection resumes its own streams itself, so its client never needs a token; a
 * token from elsewhere names a stream of another session, which cannot be resumed here. The
 * server may have run that request: it is sent again only when repeating it is safe (a method
 * that only reads); anything else, a tool call above all, is answered OUTCOME_UNKNOWN and the
 * application decides.
 */
import { OutcomeUnknownError } from '../../index.js';
import { mayReplay } from '../../runtime/recovery/replay-policy.js';
import { errorOf, type WireError } from './wire.js';

/** True when the request may be sent as itself; otherwise it was answered with the error. */
export function mayResend(method: string, server: string, answerError: (error: WireError) => void): boolean {
  if (mayReplay(method, undefined, 'safe', undefined)) return true;
  answerError(
    errorOf(
      new OutcomeUnknownError(method, 'the stream of an earlier connection it was to resume (resumptionToken) ended', {
        server,
      }),
    ),
  );
  return false;
}

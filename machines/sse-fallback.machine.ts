/**
 * The fallback from Streamable HTTP to legacy HTTP+SSE, for `type: 'auto'` servers whose
 * `initialize` POST was answered 400, 404 or 405 (docs/client-requirements.md §46-47). It opens the legacy
 * GET stream and waits for its `endpoint` event (the transport bounds that wait). It ends with
 * `{ found: true }`, or `{ found: false, error }` naming both failures; never with an error, so
 * the connection decides what happens next.
 */
import { assign, setup, type PromiseActorLogic } from 'xstate';
import { describeError } from './describe-error.js';

export interface SseFallbackInput {
  server: string;
  /** Why Streamable HTTP was given up (the initialize POST's failure). */
  reason: string;
}

/** `fatal`: the probe's failure is one a restart cannot fix (a URL nothing answers at). */
export type SseFallbackOutput = { found: true } | { found: false; error: string; fatal?: boolean | undefined };

export interface SseFallbackContext {
  server: string;
  reason: string;
  error: string | undefined;
  fatal: boolean;
}

export const sseFallbackMachine = setup({
  types: {
    input: {} as SseFallbackInput,
    context: {} as SseFallbackContext,
    output: {} as SseFallbackOutput,
    children: {} as { probe: 'open legacy stream' },
  },
  actors: {
    // Provided by src/runtime/actors: opens the legacy stream, resolves once `endpoint` arrived.
    'open legacy stream': {} as PromiseActorLogic<void, SseFallbackInput>,
  },
  actions: {
    'remember probe failure': assign(({ context }, params: { error: unknown }) => {
      const text = describeError(params.error);
      const fatal = (params.error as { fatal?: unknown } | null)?.fatal === true;
      // A fatal failure says it all (it names both refusals).
      if (fatal) return { error: text, fatal };
      return { error: `Streamable HTTP was refused (${context.reason}) and the legacy SSE probe failed too (${text})` };
    }),
  },
}).createMachine({
  id: 'sse-fallback',
  context: ({ input }) => ({ server: input.server, reason: input.reason, error: undefined, fatal: false }),
  initial: 'probing',
  states: {
    probing: {
      invoke: {
        id: 'probe',
        src: 'open legacy stream',
        input: ({ context }) => ({ server: context.server, reason: context.reason }),
        onDone: 'found endpoint',
        onError: {
          target: 'no endpoint',
          actions: { type: 'remember probe failure', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    'found endpoint': { type: 'final' },
    'no endpoint': { type: 'final' },
  },
  output: ({ context }) =>
    context.error === undefined ? { found: true } : { found: false, error: context.error, fatal: context.fatal },
});

/**
 * The fallback from Streamable HTTP to legacy HTTP+SSE, for `type: 'auto'` servers whose
 * `initialize` POST was answered 400, 404 or 405 (SPEC-CHECKLIST §46-47). It opens the legacy
 * GET stream and waits for its `endpoint` event (the transport bounds that wait). It ends with
 * `{ found: true }`, or `{ found: false, error }` naming both failures; never with an error, so
 * the connection decides what happens next.
 */
import { assign, setup, type PromiseActorLogic } from 'xstate';

export interface SseFallbackInput {
  server: string;
  /** Why Streamable HTTP was given up (the initialize POST's failure). */
  reason: string;
}

export type SseFallbackOutput = { found: true } | { found: false; error: string };

export interface SseFallbackContext {
  server: string;
  reason: string;
  error: string | undefined;
}

export const sseFallbackMachine = setup({
  types: {
    input: {} as SseFallbackInput,
    context: {} as SseFallbackContext,
    output: {} as SseFallbackOutput,
  },
  actors: {
    // Provided by src/actors: opens the legacy stream, resolves once `endpoint` arrived.
    'open legacy stream': {} as PromiseActorLogic<void, SseFallbackInput>,
  },
  actions: {
    'remember probe failure': assign({
      error: ({ context, event }) => {
        const error = (event as unknown as { error: unknown }).error;
        const text = error instanceof Error ? error.message : String(error);
        return `Streamable HTTP was refused (${context.reason}) and the legacy SSE probe failed too (${text})`;
      },
    }),
  },
}).createMachine({
  id: 'sse-fallback',
  context: ({ input }) => ({ server: input.server, reason: input.reason, error: undefined }),
  initial: 'probing',
  states: {
    probing: {
      invoke: {
        id: 'probe',
        src: 'open legacy stream',
        input: ({ context }) => ({ server: context.server, reason: context.reason }),
        onDone: 'found endpoint',
        onError: { target: 'no endpoint', actions: 'remember probe failure' },
      },
    },
    'found endpoint': { type: 'final' },
    'no endpoint': { type: 'final' },
  },
  output: ({ context }) => (context.error === undefined ? { found: true } : { found: false, error: context.error }),
});

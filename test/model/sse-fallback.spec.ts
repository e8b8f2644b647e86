/** The sse-fallback machine's model: the probe either finds the legacy endpoint or fails. */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { sseFallbackMachine, type SseFallbackInput } from '../../machines/sse-fallback.machine.js';
import type { Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const INPUT: SseFallbackInput = { server: 'old', reason: "HTTP 405 for 'initialize'" };

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (!snapshot.matches('probing')) return [];
  return [
    { type: 'xstate.done.actor.probe', output: undefined },
    { type: 'xstate.error.actor.probe', error: new Error('no endpoint event within 10000 ms') },
    // A URL nothing answers at (404 to both first handshakes): the runtime's error is fatal and says it all.
    { type: 'xstate.error.actor.probe', error: Object.assign(new Error('nothing answers MCP at …'), { fatal: true }) },
  ];
}

function project(snapshot: AnyMachineSnapshot) {
  return { value: snapshot.value, status: snapshot.status, output: snapshot.output ?? null };
}

function checkSideEffects({ h, event, after }: StepContext): void {
  expect(h.controls.started[0], 'the probe is told who and why').toEqual({ key: 'probe', input: INPUT });
  if (event.type === 'xstate.done.actor.probe') expect(after.output).toEqual({ found: true });
  if (event.type === 'xstate.error.actor.probe' && (event.error as { fatal?: boolean }).fatal === true)
    expect(after.output, 'a fatal failure is passed on as is').toEqual({
      found: false,
      error: 'nothing answers MCP at …',
      fatal: true,
    });
  else if (event.type === 'xstate.error.actor.probe') {
    expect(after.output, 'the failure names both the refusal and the probe error').toEqual({
      found: false,
      error: `Streamable HTTP was refused (${INPUT.reason}) and the legacy SSE probe failed too (no endpoint event within 10000 ms)`,
      fatal: false,
    });
  }
}

export const sseFallbackSpec = (machine: AnyStateMachine = sseFallbackMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({ actors: { 'open legacy stream': h.controls.promise() } }),
  events,
  project,
  afterStep: checkSideEffects,
});

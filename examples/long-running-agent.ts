/**
 * A long-running agent that rides out a server restart: it calls a tool every second for as long
 * as it runs, and prints each answer and each lifecycle transition. Restart the server while it
 * runs (Ctrl-C it and start it again): the transitions show the connection noticing, waiting and
 * coming back, and the calls made meanwhile wait and are answered — none is lost.
 *
 * Against server-everything (`npx @modelcontextprotocol/server-everything streamableHttp`, port
 * 3001): `npx tsx examples/long-running-agent.ts` (CALLS=n stops after n calls).
 */
import { createSupervisor, isMcpSupervisorError } from 'mcp-supervisor';

const sup = createSupervisor({
  servers: {
    everything: {
      url: process.env.EVERYTHING_URL ?? 'http://127.0.0.1:3001/mcp',
      // Come back fast after a restart: first retry after 200 ms, never more than 2 s apart.
      restart: { backoff: { initialMs: 200, maxMs: 2_000 } },
    },
  },
});
const time = () => new Date().toISOString().slice(11, 23);
sup.on('transition', ({ server, from, to, cause }) =>
  console.log(`${time()}  ${server}: ${from ?? '(start)'} -> ${to} (${cause})`),
);
await sup.start();

const echo = sup.server('everything'); // keep the handle: it survives re-initializations and restarts
const calls = Number(process.env.CALLS ?? Infinity);
let stopping = false;
process.once('SIGINT', () => (stopping = true));
for (let n = 1; n <= calls && !stopping; n++) {
  try {
    // A call made while the server is away waits for it (up to the timeout), then is answered.
    const result = await echo.callTool('echo', { message: `call ${n}` }, { timeoutMs: 60_000 });
    const [first] = result.content;
    console.log(`${time()}  ${first?.type === 'text' ? String(first.text) : JSON.stringify(result.content)}`);
  } catch (error) {
    // Only what cannot be waited out reaches here: a timeout, or an error the server answered.
    console.log(`${time()}  call ${n} failed: ${isMcpSupervisorError(error) ? error.code : String(error)}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}
await sup.stop();

"""A 2025-era host as Python agents write one: the official SDK's ClientSession over Streamable HTTP.

Calls a tool every --interval-ms and prints one JSON line per call (ok or the error). A line
"mark" on stdin is echoed as {"event": "mark"} (the test marks a moment, e.g. the gateway is back);
"stop" (or the end of stdin) ends the run with {"event": "done", "session_ids": N}: how many
different Mcp-Session-Id values the host sent (1: one session throughout). --retries N turns on
the HTTP transport's connect retries (httpx); 0 is a plain host.
"""

import argparse
import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def emit(line: dict) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--token", default="")
    parser.add_argument("--tool", default="example__echo")
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--retries", type=int, default=0)
    args = parser.parse_args()

    session_ids: set[str] = set()

    async def seen(request: httpx2.Request) -> None:
        sid = request.headers.get("mcp-session-id")
        if sid:
            session_ids.add(sid)

    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    transport = httpx2.AsyncHTTPTransport(retries=args.retries)
    stopped = anyio.Event()

    async def read_stdin() -> None:
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
            if line.strip() == "mark":
                emit({"event": "mark"})
            elif line == "" or line.strip() == "stop":
                stopped.set()
                return

    try:
        async with httpx2.AsyncClient(
            headers=headers,
            transport=transport,
            timeout=httpx2.Timeout(30, read=300),
            event_hooks={"request": [seen]},
        ) as http:
            async with streamable_http_client(args.url, http_client=http) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=15) as session:
                    await session.initialize()
                    emit({"event": "ready"})
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(read_stdin)
                        i = 0
                        while not stopped.is_set():
                            try:
                                result = await session.call_tool(args.tool, {"text": str(i)})
                                text = result.content[0].text if result.content else ""
                                ok = not result.is_error and text == str(i)
                                emit({"i": i, "ok": ok, **({} if ok else {"error": text[:300]})})
                            except Exception as error:  # noqa: BLE001 - every failure is reported
                                emit({"i": i, "ok": False, "error": repr(error)[:300]})
                            i += 1
                            with anyio.move_on_after(args.interval_ms / 1000):
                                await stopped.wait()
                        tg.cancel_scope.cancel()
    except BaseException as error:  # noqa: BLE001 - the session died: said, then the run ends
        emit({"event": "died", "error": repr(error)[:500]})
        emit({"event": "done", "session_ids": len(session_ids)})
        return
    emit({"event": "done", "session_ids": len(session_ids)})


anyio.run(main)

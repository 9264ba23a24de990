"""A slow link on 127.0.0.1: a TCP proxy that holds every chunk for a fixed time each way.

Binder readers often sit 150 ms (round trip) from their server.  Put this between the browser
and a local Jupyter server and everything (HTTP and the kernel's websocket) arrives
``delay`` seconds late in each direction, in order, as on such a link.  Used by
tests/test_jupyter_browser.py (fast input over a slow link) and scripts/bench.py.

    python3 scripts/latency_proxy.py 8888 --delay 0.075      # prints the proxy's port

    with latency_proxy.running(target_port=8888, delay=0.075) as port:
        ...  # open http://127.0.0.1:{port}/lab
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy reader -> writer, each chunk written ``delay`` s after it was read, order kept."""
    queue: asyncio.Queue = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(deliver())
    try:
        while data := await reader.read(65536):
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        sender.cancel()
        with contextlib.suppress(BaseException):
            await sender
        with contextlib.suppress(Exception):
            writer.close()


async def _serve(target_port: int, delay: float, ready: list, started: threading.Event, stop: asyncio.Event) -> None:
    async def handle(client_r, client_w):
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pipe(client_r, server_w, delay), _pipe(server_r, client_w, delay))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    ready.append(server.sockets[0].getsockname()[1])
    started.set()
    async with server:
        await stop.wait()
    # Close the open connections' tasks before the loop goes (no "Task was destroyed" at exit).
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.contextmanager
def running(target_port: int, delay: float = 0.075) -> Iterator[int]:
    """Run the proxy in a background thread; yields its port on 127.0.0.1."""
    loop = asyncio.new_event_loop()
    ready: list = []
    started = threading.Event()
    stop = asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete,
                              args=(_serve(target_port, delay, ready, started, stop),), daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("latency proxy did not start")
    try:
        yield ready[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target_port", type=int, help="the local server's port (127.0.0.1)")
    parser.add_argument("--delay", type=float, default=0.075, help="seconds each way (default 0.075)")
    args = parser.parse_args()
    with running(args.target_port, args.delay) as port:
        print(f"127.0.0.1:{port} -> 127.0.0.1:{args.target_port}, {args.delay * 1000:.0f} ms each way (Ctrl+C stops)",
              flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()

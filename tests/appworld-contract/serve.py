"""Runs AppWorld's own environment server (the FastAPI app of `appworld.serve.environment`, as
installed from PyPI) under uvicorn on 127.0.0.1, with one change: the world class its
`/initialize` makes is `bundled_world.BundledWorld` (that file says why).

Binds a free port itself and prints `listening on http://127.0.0.1:<port>` once connections are
accepted, so the test never races another process for a port.
"""

import os
import socket
import sys

import uvicorn

import appworld.serve.environment as environment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundled_world import BundledWorld  # noqa: E402

# The one replacement: `initialize` looks the name up in the module when it runs.
environment.AppWorld = BundledWorld


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # listening before the line is printed: a client that connects at once waits in the backlog
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(environment.app, log_level="warning"))
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()

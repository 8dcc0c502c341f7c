"""A throwaway ``redis-server`` for the tests, and a child-process extraction run.

:func:`start_redis` runs the Debian ``redis-server`` binary on a free port in a temporary
folder (no persistence) and waits until it answers PING; the ``redis_server`` fixture
(tests/conftest.py) skips the test with the reason when the binary or the ``redis``
client is missing, or when the server does not start.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from fakes import CountingEcho


class RedisUnavailable(Exception):
    """Why a test Redis server could not be started (the fixture skips with it)."""


class RedisServer:
    """A running ``redis-server`` child process."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, folder: Path) -> None:
        self.process = process
        self.port = port
        self.folder = folder

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):  # type: ignore[no-untyped-def]
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, db=0)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(folder: Path, timeout: float = 10.0) -> RedisServer:
    """Start ``redis-server`` on a free port; raise :class:`RedisUnavailable` if it cannot."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RedisUnavailable(
            "redis-server is not installed (apt-get install -y redis-server; .ci/run does this)"
        )
    try:
        import redis
    except ImportError:
        raise RedisUnavailable(
            'the redis client is not installed (pip install "redis>=5")'
        ) from None
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = folder / "redis.log"
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
            "--logfile",
            str(log),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    server = RedisServer(process, port, folder)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-400:] if log.exists() else ""
            raise RedisUnavailable(f"redis-server exited with {process.returncode}: {tail}")
        try:
            if redis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5).ping():
                return server
        except redis.RedisError:
            time.sleep(0.05)
    server.kill()
    raise RedisUnavailable(f"redis-server did not answer PING on port {port} within {timeout} s")


def corpus(n: int, offset: int = 0) -> list[tuple[str, str]]:
    """``n`` one-sentence documents ``(id, text)`` numbered from ``offset``."""
    return [(f"d{i}", f"Factor {i} causes outcome {i}.") for i in range(offset, offset + n)]


def extract_in_process(url: str, docs: list[tuple[str, str]]) -> dict[str, int]:
    """Run an extractor over ``docs`` with the cache at ``url`` (a child process)."""
    from sarg_integrations import LLMTripleExtractor
    from sarg_integrations.schema import SourceDocument

    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=url, model_identity="echo", max_concurrency=4)
    outcomes = extractor.extract_many([SourceDocument(i, t) for i, t in docs])
    extractor.close()
    return {
        "calls": model.calls,
        "triples": sum(len(o.triples) for o in outcomes),
        "cache_errors": sum(int(o.stats.get("cache_errors", 0)) for o in outcomes),
    }

"""Pre-extraction on a Ray cluster (``sarg extract --ray [ADDRESS]``; the ``ray`` extra).

:class:`RayExecutor` starts ``workers`` Ray actors; each builds one extractor from the
factory and fills the cache one batch at a time, so at most ``workers × max_concurrency``
model calls are in flight over the whole cluster. Batches go to whichever actor is free
(``ray.util.ActorPool``), and the counters come back to the driver as batches finish.
Every actor writes to the cache the factory names, so on a cluster that must be a
shared one (``redis://…``): an SQLite path would be a private file on each node.

``ray`` is imported when the executor runs, never when the package is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations.errors import ConfigError, MissingDependencyError
from sarg_integrations.extraction.prefill import CacheFiller

__all__ = ["RayExecutor"]


class _Filler:
    """The body of one Ray actor: one extractor, many batches."""

    def __init__(self, factory: Callable[[], CacheFiller]) -> None:
        self.extractor = factory()

    def fill(self, batch: list[str]) -> dict[str, int]:
        return dict(self.extractor.fill_cache(batch))


class RayExecutor:
    """Runs the batches on Ray actors.

    Args:
        address: The cluster (``"auto"``, ``"ray://head:10001"``…); ``None`` connects
            to ``RAY_ADDRESS`` when set, else starts a local Ray instance. Ignored when
            Ray is already initialised in this process.
        workers: Actors (each runs one batch at a time).
        cpus_per_worker: CPUs Ray reserves per actor; LLM extraction waits on the
            network, so the default is a fraction of a CPU.

    Raises:
        ConfigError: ``workers`` < 1 or ``cpus_per_worker`` <= 0.
        MissingDependencyError: ``ray`` is not installed (when the executor runs).
    """

    def __init__(
        self, address: str | None = None, *, workers: int = 4, cpus_per_worker: float = 0.25
    ) -> None:
        if not is_whole(workers, 1):
            msg = f"workers={workers!r} is invalid; use a whole number >= 1, e.g. 4"
            raise ConfigError(msg, field="workers", value=workers)
        if not isinstance(cpus_per_worker, (int, float)) or not cpus_per_worker > 0:
            msg = f"cpus_per_worker={cpus_per_worker!r} is invalid; use a number > 0, e.g. 0.25"
            raise ConfigError(msg, field="cpus_per_worker", value=cpus_per_worker)
        self.address = address
        self.workers = workers
        self.cpus_per_worker = float(cpus_per_worker)

    def __str__(self) -> str:
        where = self.address or "a local Ray instance"
        return f"Ray ({self.workers} actor(s), {where})"

    def map(
        self, factory: Callable[[], CacheFiller], batches: Sequence[list[str]]
    ) -> Iterator[Mapping[str, int]]:
        """Yield each batch's counters as it finishes."""
        if not batches:
            return
        ray = _ray()
        started_here = False
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            started_here = True
        try:
            from ray.util import ActorPool

            actor = ray.remote(num_cpus=self.cpus_per_worker)(_Filler)
            actors = [actor.remote(factory) for _ in range(min(self.workers, len(batches)))]
            pool = ActorPool(actors)
            yield from pool.map_unordered(lambda a, batch: a.fill.remote(batch), list(batches))
            for a in actors:
                ray.kill(a)
        finally:
            if started_here:
                ray.shutdown()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", feature="sarg extract --ray", extra="ray") from None
    return ray

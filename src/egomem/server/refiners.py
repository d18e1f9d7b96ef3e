"""The model's passes in `egomem serve`: one low-priority worker per tenant, for as long as the
server runs.

With `memory.model_pass = "after"` a finished session is written by the rules at once and the
language model's pass over it follows as a second job (memory/jobs.py). A device's session ends
when its first writes are in: its agent leaves the model's passes in the store
(`build_agent(refine_here=False)`), and this tenant's worker runs them, at the priority of the
agents' own refining threads, while the devices go on streaming. A server stopped with passes
still waiting leaves them in the store: the tenant's worker runs them once its next device connects.

The workers yield while a device's perception falls behind (any device's, whatever its tenant:
they share the CPU): before each pass, as the agents' own workers do (memory/job_worker.py). A
pass already running is not interrupted.

Nothing runs here when the model does not refine (rules only, or `model_pass = "inline"`), or
when the fleet's queue runs every job (`memory.queue = "fleet"`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

from egomem.memory.job_worker import JobWorker
from egomem.runtime.memory_queue import REFINE_NICE, memory_jobs
from egomem.runtime.services import Services

log = logging.getLogger(__name__)


class TenantRefiners:
    def __init__(self) -> None:
        self._workers: dict[str, JobWorker] = {}
        self._devices: dict[int, Callable[[], bool]] = {}  # live device -> whether its perception is behind
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def device(self, behind: Callable[[], bool]) -> Iterator[None]:
        """A device streaming for as long as the block runs; `behind()`: whether its perception is late."""
        key = id(behind)
        with self._lock:
            self._devices[key] = behind
        try:
            yield
        finally:
            with self._lock:
                self._devices.pop(key, None)

    def behind(self) -> bool:
        """Whether any live device's perception is behind: the workers then wait before their next pass."""
        with self._lock:
            probes = list(self._devices.values())
        return any(p() for p in probes)

    def ensure(self, tenant: str, services: Services) -> bool:
        """The tenant's worker running (started on its first device session); False when the tenant's
        model does not refine, so each agent keeps the passes it has (none)."""
        config = services.config
        if services.manager.refiner is None or config.memory.queue == "fleet":
            return False
        with self._lock:
            worker = self._workers.get(tenant)
            if worker is None or not worker.alive:
                jobs = memory_jobs(config, services.store, services.manager)
                self._workers[tenant] = JobWorker(jobs, behind=self.behind, kind="refine", nice=REFINE_NICE).start()
        return True

    def stop(self) -> None:
        """Every worker stopped after the pass in hand (the others wait in the store)."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.stop(drain=False)
        if workers:
            log.info("stopped %d tenant refining worker(s)", len(workers))

"""Sleep-time work on a schedule in `egomem serve`: one scheduler per tenant store
(memory/sleep_time.py), ticked by one thread while the app runs.

A tenant sleeps when none of its device streams has had activity (an event on its timeline)
for `memory.sleep_idle_s`, no stream is finishing its last session, and its last pass is at
least `memory.sleep_interval_s` old; a device that stays connected but silent does not keep
its tenant awake. Stream sessions report through `of(tenant)` (server/session.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from egomem.config import Config
from egomem.memory.sleep_time import SleepReport, SleepScheduler, poll_interval, scheduler_for
from egomem.memory.updater import Encoder
from egomem.server.tenants import TenantRegistry

log = logging.getLogger(__name__)


class TenantSleep:
    def __init__(self, config: Config, tenants: TenantRegistry, encoder: Callable[[], Encoder]) -> None:
        self.config, self.tenants, self.encoder = config, tenants, encoder
        self._schedulers: dict[str, SleepScheduler | None] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def of(self, tenant: str) -> SleepScheduler | None:
        """The tenant's scheduler (None when sleep-time work is off)."""
        with self._lock:
            if tenant not in self._schedulers:
                self._schedulers[tenant] = scheduler_for(self.tenants.store(tenant), self.encoder, self.config)
            return self._schedulers[tenant]

    def tick(self) -> dict[str, SleepReport]:
        """One round over every tenant: the passes that ran, by tenant."""
        ran: dict[str, SleepReport] = {}
        for tenant in self.tenants.list():
            if self._stop.is_set():
                break
            scheduler = self.of(tenant.id)
            if scheduler is None:
                continue
            try:
                report = scheduler.tick()
            except Exception as exc:  # that tenant's pass rolled back; the others still run
                log.warning("sleep-time work of tenant %s failed (nothing half-done was kept): %s", tenant.id, exc)
                continue
            if report is not None:
                ran[tenant.id] = report
        return ran

    def start(self) -> None:
        interval = self.config.memory.sleep_interval_s
        if interval is None or self._thread is not None:
            return
        poll_s = poll_interval(interval)

        def loop() -> None:
            while not self._stop.wait(poll_s):
                self.tick()

        self._stop.clear()
        self._thread = threading.Thread(target=loop, name="egomem-sleep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the schedule; a pass in progress stops after the person it is on."""
        self._stop.set()
        with self._lock:  # a stopped scheduler stays stopped: a later start() makes new ones
            schedulers = [s for s in self._schedulers.values() if s is not None]
            self._schedulers.clear()
        for s in schedulers:
            s.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

"""A PostgreSQL restart under load (`pg_ctl restart -m fast`, what an upgrade or a failover
does): every write that returned is still there afterwards, callers saw only one-line
StoreErrors meanwhile, and the same store objects work again without being reopened. And
a fresh database gets pgvector in public, where no store's schema can take it away.

The server restarted is a throwaway cluster of this test's own (initdb in a temporary
directory, a free port), never the shared one in EGOMEM_TEST_PG_DSN that other tests use:
it needs PostgreSQL's binaries with pgvector installed (scripts/postgres.sh) and root, to
run them as user postgres as that script does.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from egomem.errors import StoreError
from egomem.schemas import Fact, Modality

psycopg = pytest.importorskip("psycopg")

from egomem.store.postgres import PostgresStore  # noqa: E402

PG_BIN = Path(os.environ.get("EGOMEM_PG_BIN", "/usr/lib/postgresql/15/bin"))
HAVE_CLUSTER_TOOLS = (PG_BIN / "initdb").exists() and Path("/usr/share/postgresql/15/extension/vector.control").exists()
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.skipif(not HAVE_CLUSTER_TOOLS, reason=f"no PostgreSQL + pgvector under {PG_BIN} (scripts/postgres.sh)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="starts a private PostgreSQL as user postgres: needs root"),
]


class Cluster:
    """A private PostgreSQL server: trust authentication on 127.0.0.1 only, a free port."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="egomem-pg-restart-"))
        shutil.chown(self.dir, "postgres", "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg(self, tool: str, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / tool), *args], check=True, capture_output=True)

    @property
    def opts(self) -> str:
        return f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}"

    def start(self) -> None:
        self.pg("initdb", "-D", str(self.dir), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        self.pg("pg_ctl", "-D", str(self.dir), "-o", self.opts, "-l", str(self.dir / "log"), "-w", "start")

    def kill_postmaster(self) -> None:
        """A crash: SIGKILL to the postmaster (no shutdown checkpoint; its backends exit when they notice)."""
        os.kill(int((self.dir / "postmaster.pid").read_text().split()[0]), signal.SIGKILL)

    def start_again(self, timeout_s: float = 60.0) -> None:
        """`pg_ctl start` after a crash, again until the killed server's backends have left its shared
        memory; the server recovers from its WAL before it accepts connections."""
        deadline = time.monotonic() + timeout_s
        while True:
            cmd = [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.dir),
                "-o",
                self.opts,
                "-l",
                str(self.dir / "log"),
                "-w",
                "start",
            ]
            done = subprocess.run(["runuser", "-u", "postgres", "--", *cmd], capture_output=True, text=True)
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"pg_ctl start after the crash failed: {done.stderr or done.stdout}")
            time.sleep(0.2)

    def log_text(self) -> str:
        return (self.dir / "log").read_text(errors="replace")

    def restart(self) -> None:
        self.pg("pg_ctl", "-D", str(self.dir), "-l", str(self.dir / "log"), "-w", "restart", "-m", "fast")

    def stop(self) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.dir), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(self.dir, ignore_errors=True)


def running_cluster() -> Iterator[Cluster]:
    """A private server for one test, removed afterwards (a fixture's body: `yield from running_cluster()`)."""
    c = Cluster()
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    yield from running_cluster()


@pytest.fixture
def workers(cluster: Cluster) -> Iterator[Callable[[], PostgresStore]]:
    """Stores ("workers") on one fresh schema of the private server."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    opened: list[PostgresStore] = []

    def open_worker() -> PostgresStore:
        opened.append(PostgresStore(cluster.dsn, schema=schema))
        return opened[-1]

    yield open_worker
    for s in opened:
        s.close()


def _remember(store: PostgresStore, rng: np.random.Generator) -> tuple[str, str, int]:
    """One person's memory in one transaction, as the memory manager writes it: user, key, fact."""
    with store.transaction():
        user = store.create_user(f"person {rng.integers(1_000_000)}")
        key = store.add_key(user.id, Modality.FACE, rng.normal(0, 0.1, 128).astype(np.float32), "dlib")
        fact = store.add_fact(Fact(user_id=user.id, text=f"likes number {rng.integers(100)}"))
    return user.id, fact.id, key.id


def test_a_restart_under_load_loses_no_committed_memory(cluster: Cluster, workers: Callable[[], PostgresStore]) -> None:
    a, b = workers(), workers()
    committed: list[tuple[str, str, int]] = []  # writes whose transaction returned
    errors: list[str] = []  # what callers were told meanwhile (allowed: one clear line each)
    failures: list[BaseException] = []  # anything else fails the test
    last_ok: dict[str, float] = {}
    stop = threading.Event()

    def run(name: str, step: Callable[[np.random.Generator], None]) -> None:
        rng = np.random.default_rng(len(name))
        while not stop.is_set():
            try:
                step(rng)
                last_ok[name] = time.monotonic()
            except StoreError as exc:
                errors.append(str(exc))
                time.sleep(0.05)
            except BaseException as exc:  # collected, failed on below
                failures.append(exc)
                return

    def write(store: PostgresStore) -> Callable[[np.random.Generator], None]:
        return lambda rng: committed.append(_remember(store, rng))

    def read(rng: np.random.Generator) -> None:
        b.nearest_keys(Modality.FACE, rng.normal(0, 0.1, 128).astype(np.float32), 5, model="dlib")
        b.list_users()

    threads = [
        threading.Thread(target=run, args=("write-a", write(a))),
        threading.Thread(target=run, args=("write-b", write(b))),
        threading.Thread(target=run, args=("read-b", read)),
    ]
    for t in threads:
        t.start()
    time.sleep(1.0)
    n_before = len(committed)
    cluster.restart()
    back = time.monotonic()
    time.sleep(2.0)  # every thread must work again after the restart
    stop.set()
    for t in threads:
        t.join(timeout=30)

    assert not failures, failures
    assert n_before > 0 and len(committed) > n_before
    assert all(last_ok.get(n, 0) > back for n in ("write-a", "write-b", "read-b")), (last_ok, back)
    assert all(len(e.splitlines()) == 1 and "PostgreSQL" in e for e in errors), errors
    check = workers()  # a new connection: what is really stored
    users = {u.id for u in check.list_users()}
    keys = {k.id: k.user_id for k in check.list_keys(Modality.FACE)}
    facts = {f.id: f.user_id for uid in users for f in check.list_facts(uid)}
    assert all(u in users and f in facts and k in keys for u, f, k in committed)
    # Nothing half-written: each person's user, key and fact went in together or not at all
    # (a write whose COMMIT reached the server but whose answer did not is whole and stored).
    assert sorted(keys.values()) == sorted(facts.values()) == sorted(users)


def test_pgvector_is_installed_in_public_where_every_schema_sees_it(cluster: Cluster) -> None:
    """The first store on a fresh database installs pgvector: in public, not in its own schema (first on
    its search_path), where dropping that schema would drop the extension for every other one."""
    first = PostgresStore(cluster.dsn, schema=f"t_{uuid.uuid4().hex[:12]}")
    first.drop_schema()
    second = PostgresStore(cluster.dsn, schema=f"t_{uuid.uuid4().hex[:12]}")
    try:
        second.add_key(second.create_user("Emily").id, Modality.FACE, np.ones(128, np.float32), "dlib")
        assert len(second.nearest_keys(Modality.FACE, np.ones(128, np.float32), 1, model="dlib")) == 1
    finally:
        second.close()
    with psycopg.connect(cluster.dsn) as conn:
        row = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector'")
        assert row.fetchone() == ("public",)

"""Where cells run: one small interface, three engines.

```text
            submit(task) -> handle          wait(handles, timeout) -> done
  runner ──────────────────────────▶ Engine ──────────────────────────▶ outcome(handle)
                                      ├─ local  process pool on this machine (default)
                                      ├─ ray    a Ray cluster (local unless --address)
                                      └─ dask   a Dask cluster (local unless --scheduler)
```

Every engine runs the same function (`cells.run_cell`) on plain data and hands back its
outcome dict; the runner alone writes results, so workers need no shared file system
(traces excepted: a trace's path must be readable where its cell runs). `stop()` asks
running cells to end early (their outcome is then `interrupted` and nothing is written) and
drops those not started. Local clusters listen on loopback only, dashboards off.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import threading
from abc import ABC, abstractmethod
from typing import Any

from .._errors import ConfigError, make_error
from .cells import CellTask, run_cell

__all__ = ["ENGINES", "DaskEngine", "Engine", "LocalEngine", "RayEngine", "make_engine"]

ENGINES = ("local", "ray", "dask")


class Engine(ABC):
    """Runs cells somewhere; see the module doc."""

    name: str

    @property
    @abstractmethod
    def workers(self) -> int:
        """How many cells run at once."""

    @abstractmethod
    def submit(self, task: CellTask) -> Any:
        """Queue one cell; returns a handle."""

    @abstractmethod
    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        """The handles among `handles` that finished within `timeout` seconds."""

    @abstractmethod
    def outcome(self, handle: Any) -> dict[str, Any]:
        """A finished cell's outcome (`cells.run_cell`'s dict). A worker that died gives a
        `failed` outcome naming the engine's error."""

    @abstractmethod
    def stop(self, handles: set[Any]) -> None:
        """Stop running cells early and drop queued ones."""

    @abstractmethod
    def close(self) -> None:
        """Release the workers (and a cluster this engine started)."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _lost(e: BaseException, engine: str) -> dict[str, Any]:
    return {"status": "failed", "error": f"{engine} worker lost: {e}", "kind": type(e).__name__}


# -- local -----------------------------------------------------------------------------------

_STOP: Any = None
#: This worker's preconditioned devices, for the cells it runs next.
_WARM: Any = None


def _init_worker(stop: Any, workers: int) -> None:
    """In each pool process: Ctrl-C is the parent's to handle (it stops cells through
    `stop`), the stop flag is kept for `run_cell`, so is a cache of preconditioned
    devices (its share of the memory budget: `workers` processes keep one each), and the
    worker ends when the sweep's process does (even killed with SIGKILL: no orphan goes
    on simulating)."""
    global _STOP, _WARM
    from ..api import PreconditionCache

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STOP = stop
    _WARM = PreconditionCache(_sharers=workers).core
    parent = multiprocessing.parent_process()
    if parent is not None:

        def end_with_parent() -> None:
            parent.join()
            os._exit(1)

        threading.Thread(target=end_with_parent, daemon=True, name="parent-watch").start()


def _run_local(task: CellTask) -> dict[str, Any]:
    return run_cell(task, _STOP, _WARM)


class LocalEngine(Engine):
    """A pool of worker processes on this machine (`forkserver`: each worker starts clean,
    whatever threads the parent runs). A worker that dies (killed, out of memory) fails
    its cell and the pool is rebuilt for the rest."""

    name = "local"

    def __init__(self, jobs: int | None = None):
        self._workers = max(1, jobs or os.cpu_count() or 1)
        self._ctx = multiprocessing.get_context("forkserver")
        self._stop = self._ctx.Event()
        self._pool = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(
            max_workers=self._workers,
            mp_context=self._ctx,
            initializer=_init_worker,
            initargs=(self._stop, self._workers),
        )

    @property
    def workers(self) -> int:
        return self._workers

    def submit(self, task: CellTask) -> Any:
        try:
            return self._pool.submit(_run_local, task)
        except cf.BrokenExecutor:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            return self._pool.submit(_run_local, task)

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        done, _ = cf.wait(handles, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return set(done)

    def outcome(self, handle: Any) -> dict[str, Any]:
        if handle.cancelled():
            return {"status": "interrupted"}
        try:
            return handle.result()
        except cf.BrokenExecutor as e:
            return _lost(e, self.name)

    def stop(self, handles: set[Any]) -> None:
        self._stop.set()
        for h in handles:
            h.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


# -- ray -------------------------------------------------------------------------------------


def _missing(extra: str, module: str) -> Exception:
    return make_error(
        ConfigError,
        f"--engine {extra} needs the `{module}` package: pip install 'zombiesim[{extra}]'",
        "config",
    )


class RayEngine(Engine):
    """Cells as Ray tasks (one CPU each). Without `address` a local Ray instance is started
    (loopback, no dashboard) and shut down on `close`; with one, the cluster is joined."""

    name = "ray"

    def __init__(self, jobs: int | None = None, address: str | None = None):
        try:
            import ray
        except ImportError:
            raise _missing("ray", "ray") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                options["address"] = address
            else:
                options.update(num_cpus=max(1, jobs or os.cpu_count() or 1))
                options["_node_ip_address"] = "127.0.0.1"
            ray.init(**options)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self._workers = max(1, min(jobs or cpus, cpus))
        self._remote = ray.remote(num_cpus=1, max_retries=0)(run_cell)

    @property
    def workers(self) -> int:
        return self._workers

    def submit(self, task: CellTask) -> Any:
        return self._remote.remote(task)

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        done, _ = self._ray.wait(list(handles), num_returns=1, timeout=timeout)
        if done:  # take every one that is ready, not just the first
            done, _ = self._ray.wait(list(handles), num_returns=len(handles), timeout=0)
        return set(done)

    def outcome(self, handle: Any) -> dict[str, Any]:
        try:
            return self._ray.get(handle)
        except self._ray.exceptions.TaskCancelledError:
            return {"status": "interrupted"}
        except self._ray.exceptions.RayError as e:
            return _lost(e, self.name)

    def stop(self, handles: set[Any]) -> None:
        for h in handles:
            self._ray.cancel(h, force=True)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


# -- dask ------------------------------------------------------------------------------------


class DaskEngine(Engine):
    """Cells as Dask futures. Without `scheduler` a local cluster of worker processes is
    started (one thread each, loopback, no dashboard) and closed on `close`."""

    name = "dask"

    def __init__(self, jobs: int | None = None, scheduler: str | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise _missing("dask", "distributed") from None
        self._cluster = None
        if scheduler:
            self._client = Client(scheduler)
        else:
            self._cluster = LocalCluster(
                n_workers=max(1, jobs or os.cpu_count() or 1),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            )
            self._client = Client(self._cluster)
        threads = sum(self._client.nthreads().values()) or 1
        self._workers = max(1, min(jobs or threads, threads))

    @property
    def workers(self) -> int:
        return self._workers

    def submit(self, task: CellTask) -> Any:
        # pure=False: the runner decides what is already done; Dask must not dedupe.
        return self._client.submit(run_cell, task, pure=False, key=f"cell-{task.key}")

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        from distributed import wait

        try:
            done, _ = wait(list(handles), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        return set(done)

    def outcome(self, handle: Any) -> dict[str, Any]:
        if handle.cancelled():
            return {"status": "interrupted"}
        try:
            return handle.result()
        except Exception as e:  # the worker process died or the scheduler lost it
            return _lost(e, self.name)

    def stop(self, handles: set[Any]) -> None:
        self._client.cancel(list(handles), force=True)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_engine(name: str, jobs: int | None = None, address: str | None = None) -> Engine:
    """An engine by name; `address` is the Ray address or the Dask scheduler."""
    if name == "local":
        if address:
            raise make_error(ConfigError, "--address is for --engine ray or dask", "config")
        return LocalEngine(jobs)
    if name == "ray":
        return RayEngine(jobs, address)
    if name == "dask":
        return DaskEngine(jobs, address)
    raise make_error(
        ConfigError, f"unknown engine `{name}` (known: {', '.join(ENGINES)})", "config"
    )

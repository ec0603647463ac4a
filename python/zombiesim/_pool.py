"""A thread pool of simulations that stops cleanly: on a failure or Ctrl-C it sets the
stop flag the running simulations watch, skips what has not started, and keeps every
result that finished. `api` runs its multi-run calls on it."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ._errors import ConfigError, make_error


def _run_pool(
    tasks: Mapping[Any, Callable[[], Any]],
    jobs: int | None,
    stop: threading.Event,
    on_done: Callable[[Any, Any], None] | None = None,
) -> tuple[dict[Any, Any], BaseException | None, bool]:
    """Run `tasks` on a thread pool. On a failure or Ctrl-C, set `stop` (running simulations
    notice within ~100 ms), skip what has not started and wait for the rest. Returns the
    results by key (in the order of `tasks`), the first failure, and whether Ctrl-C was
    pressed.

    Ctrl-C may arrive at any moment: while the tasks are still being submitted (a first
    task reports progress at once, so a signal sent when it does can land inside
    `submit`, before its future is known here), while the pool waits, or while it shuts
    down. On the main thread the signals are only noted while the pool runs
    (`_signals_noted`) and polled here every 0.25 s; elsewhere each task records its own
    outcome, and the pool is always shut down and waited for: wherever the
    `KeyboardInterrupt` is raised, it sets `stop` first (the threads would otherwise
    simulate to the end), and no task that ran is lost. A task that has not begun when
    `stop` is set is skipped."""
    outcomes: dict[Any, tuple[bool, Any]] = {}
    failure: BaseException | None = None
    interrupted = False
    futures: dict[cf.Future, Any] = {}
    reported: set[cf.Future] = set()
    keys: list[Any] = []  # in the order given, each before its task is submitted

    def recorded(key: Any, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            if stop.is_set():
                return None
            try:
                value = fn()
            except BaseException as e:
                outcomes[key] = (False, e)
                raise
            outcomes[key] = (True, value)
            return value

        return run

    def halt() -> None:
        stop.set()
        for f in futures:
            f.cancel()

    def answer(signalled: list[int]) -> None:
        """A signal noted since the last look stops the pool, once."""
        nonlocal interrupted
        if signalled and not interrupted:
            interrupted = True
            halt()

    pool = cf.ThreadPoolExecutor(max_workers=_jobs(jobs, len(tasks)))
    with _signals_noted() as signalled:
        try:
            for key, fn in tasks.items():
                keys.append(key)
                futures[pool.submit(recorded(key, fn))] = key
            while True:
                try:
                    answer(signalled)
                    pending = [f for f in futures if not f.done()]
                    if not pending:
                        break
                    cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
                    for f in futures:
                        if f in reported or not f.done() or f.cancelled():
                            continue
                        reported.add(f)
                        if f.exception() is not None:
                            failure = failure or f.exception()
                            halt()
                        elif on_done is not None and not stop.is_set():
                            on_done(futures[f], f.result())
                except KeyboardInterrupt:
                    interrupted = True
                    halt()
        except KeyboardInterrupt:
            interrupted = True
            halt()
        # Wait for what runs, still answering a signal (it stops them).
        while True:
            try:
                answer(signalled)
                pool.shutdown(wait=False, cancel_futures=stop.is_set())
                running = [f for f in futures if not f.done()]
                if not running:
                    break
                cf.wait(running, timeout=0.25)
            except KeyboardInterrupt:
                interrupted = True
                halt()
        while True:
            try:
                pool.shutdown(wait=True)
                break
            except KeyboardInterrupt:
                interrupted = True
                halt()
    interrupted = interrupted or bool(signalled)
    results: dict[Any, Any] = {}
    for key in keys:
        if key not in outcomes:
            continue
        ok, value = outcomes[key]
        if ok:
            results[key] = value
        elif failure is None:
            failure = value
    return results, failure, interrupted


@contextmanager
def _signals_noted() -> Iterator[list[int]]:
    """While a pool of simulations runs, SIGINT and SIGTERM are only noted (the list
    yielded gets the signal), to be acted on where the pool looks (`_run_pool` polls
    it): a `KeyboardInterrupt` raised inside the executor's own locking (a signal landing
    in `submit`) left a lock released twice, a `RuntimeError` instead of an interrupt.
    On the way out the handlers are put back and the first signal noted is handed to the
    one it would have reached (the command line's SIGTERM handler marks the run as
    terminated; Python's SIGINT handler raises `KeyboardInterrupt`, which is taken as
    the interrupt it is). Off the main thread, where handlers cannot be set, nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    noted: list[int] = []

    def note(signum: int, frame: object) -> None:
        noted.append(signum)

    previous = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield noted
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if noted:
            handler = previous[noted[0]]
            if callable(handler):
                try:
                    handler(noted[0], None)
                except KeyboardInterrupt:
                    pass
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), noted[0])


def _check_jobs(jobs: int | None) -> None:
    if jobs is None:
        return
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise make_error(
            ConfigError,
            f"config key `jobs`: expected a whole number from 1, found {jobs!r}",
            "config",
        )


def _jobs(jobs: int | None, n: int) -> int:
    if jobs is None or jobs <= 0:
        jobs = os.cpu_count() or 1
    return max(1, min(jobs, n))

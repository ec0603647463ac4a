"""The exception classes (defined in the Rust binding) and helpers to raise them from Python.

```text
ZombiesimError (ValueError)          .kind, .exit_code
 ├─ ConfigError       a config key is unknown, mistyped or impossible      (exit 2)
 ├─ WorkloadError     a workload spec is malformed                         (exit 2)
 ├─ InputError        a file is missing or malformed (file:line)           (exit 2)
 ├─ DeviceFullError   GC could not reclaim space                           (exit 2)
 ├─ OutOfRangeError   a request beyond the logical space                   (exit 2)
 └─ IntegrityError    the oracle or an invariant check failed (a bug)      (exit 1)
SimulationInterrupted (KeyboardInterrupt)   .report / .reports: what ran before Ctrl-C
```
"""

from __future__ import annotations

from typing import Any

from ._core import (
    ConfigError,
    DeviceFullError,
    InputError,
    IntegrityError,
    OutOfRangeError,
    WorkloadError,
    ZombiesimError,
)

__all__ = [
    "ConfigError",
    "DeviceFullError",
    "InputError",
    "IntegrityError",
    "OutOfRangeError",
    "SimulationInterrupted",
    "WorkloadError",
    "ZombiesimError",
    "make_error",
]


def make_error(cls: type[ZombiesimError], message: str, kind: str) -> ZombiesimError:
    """An exception of `cls` raised from Python, with the same `kind`/`exit_code` attributes
    the binding sets on its own."""
    err = cls(message)
    err.kind = kind
    err.exit_code = 1 if cls is IntegrityError else 2
    return err


class SimulationInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a simulation. `report` holds the partial report of a single run
    (`report.run.interrupted` is true); `reports` holds every report of a multi-run call
    (`compare`), finished or partial, keyed by label."""

    def __init__(self, report: Any = None, reports: dict[str, Any] | None = None):
        super().__init__("simulation interrupted")
        self.report = report
        self.reports = reports if reports is not None else {}

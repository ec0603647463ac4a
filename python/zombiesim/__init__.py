"""zombiesim: an SSD simulator whose garbage collector knows what the buffers above the
flash hold. Rust runs every simulated step; this package configures, runs, compares and
presents.

>>> import zombiesim as zs
>>> cfg = zs.Config.preset("default").override({"gc.policy": "cost-benefit"})
>>> rep = zs.simulate(cfg, zs.workload.hotcold(r=0.9, f=0.1, drive_writes=1), seed=1)
>>> rep.waf >= 1
True
"""

from typing import TYPE_CHECKING, Any

from . import hooks, samples, trace, workload
from ._core import __version__, analytic_wa
from ._errors import (
    ConfigError,
    DeviceFullError,
    InputError,
    IntegrityError,
    OutOfRangeError,
    SimulationInterrupted,
    WorkloadError,
    ZombiesimError,
)
from .api import (
    DEFAULT_SEED,
    PreconditionCache,
    compare,
    compare_configs,
    compare_reports,
    simulate,
    simulate_many,
    simulate_trace,
    to_frame,
    validate,
    validation_cases,
)
from .catalog import (
    policies,
    preset_toml,
    presets,
    schemes,
    workload_common_keys,
    workloads,
)
from .config import Config
from .report import Report
from .trace import TraceInput
from .workload import Workload

if TYPE_CHECKING:
    from . import analyze, plot, reproduce
    from .studies import study
    from .sweeps import load, sweep

#: What is imported on first use (`zs.sweep`, `zs.analyze`, ...): the command line and a
#: plain `zs.simulate` start without the sweep engines, the reproductions, the analyses
#: and the plots. Name -> (module, attribute or None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "analyze": (".analyze", None),
    "plot": (".plot", None),
    "reproduce": (".reproduce", None),
    "study": (".studies", "study"),
    "load": (".sweeps", "load"),
    "sweep": (".sweeps", "sweep"),
}


def __getattr__(name: str) -> Any:
    import importlib

    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'zombiesim' has no attribute {name!r}") from None
    value = importlib.import_module(module, __name__)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEFAULT_SEED",
    "Config",
    "ConfigError",
    "DeviceFullError",
    "InputError",
    "IntegrityError",
    "OutOfRangeError",
    "PreconditionCache",
    "Report",
    "SimulationInterrupted",
    "TraceInput",
    "Workload",
    "WorkloadError",
    "ZombiesimError",
    "__version__",
    "analyze",
    "analytic_wa",
    "load",
    "compare",
    "compare_configs",
    "compare_reports",
    "plot",
    "policies",
    "preset_toml",
    "presets",
    "reproduce",
    "samples",
    "schemes",
    "simulate",
    "simulate_many",
    "simulate_trace",
    "study",
    "hooks",
    "sweep",
    "to_frame",
    "trace",
    "validate",
    "validation_cases",
    "workload",
    "workload_common_keys",
    "workloads",
]

"""`Config`: an immutable, picklable device configuration.

A `Config` wraps the Rust `_core.Config`. Every change returns a new object; two configs are
equal when their resolved TOML is equal. Keys are dotted paths into the TOML document
(`gc.policy`, `flash.blocks_per_plane`, `ftl.over_provisioning`, ...).
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from ._errors import ConfigError, InputError, ZombiesimError, make_error

__all__ = ["Config", "toml_value"]


def toml_value(value: Any) -> str:
    """The text the binding expects for one `--set`-style value.

    Booleans become `true`/`false`, numbers their repr, strings pass through as they are
    (the binding reads a value as TOML and falls back to a bare string, so `"greedy"`,
    `"16KiB"` and `"d-choices:10"` all work), lists become TOML arrays."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        items = (json.dumps(v) if isinstance(v, str) else toml_value(v) for v in value)
        return "[" + ", ".join(items) + "]"
    raise TypeError(f"cannot use a {type(value).__name__} as a config value: {value!r}")


class Config:
    """A resolved, validated device configuration (immutable).

    >>> cfg = Config.preset("default").override({"gc.policy": "cost-benefit"})
    >>> cfg.get("gc.policy")
    'cost-benefit'
    """

    __slots__ = ("_inner", "_notes")
    _inner: _core.Config
    #: What deriving this config dropped: values a preset or file gave to keys that nothing
    #: in it reads (`--preset ba-gc --set ftl.kind=page` drops FAST's `ftl.log_blocks`).
    _notes: tuple[str, ...]

    def __init__(self, toml_text: str | None = None, origin: str = "<string>"):
        """Parse a TOML document (`None` = the `default` preset); `origin` names it in errors."""
        object.__setattr__(self, "_inner", _core.Config(toml_text, origin))
        object.__setattr__(self, "_notes", ())

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def _wrap(cls, inner: _core.Config, notes: Iterable[str] = ()) -> Config:
        obj = cls.__new__(cls)
        object.__setattr__(obj, "_inner", inner)
        object.__setattr__(obj, "_notes", tuple(notes))
        return obj

    @classmethod
    def preset(cls, name: str = "default") -> Config:
        """A named preset (see `zombiesim.presets()`); unknown names raise `ConfigError`."""
        return cls._wrap(_core.Config.preset(name))

    @classmethod
    def from_toml(cls, text: str, origin: str = "<string>") -> Config:
        """Parse a TOML document; keys it leaves out take their defaults."""
        return cls._wrap(_core.Config(text, origin))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Config:
        """Read a TOML file. A missing or unreadable file raises `InputError` naming it;
        errors inside it name the file and line or the key."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise make_error(InputError, f"cannot read config `{path}`: {reason}", "io") from e
        origin = os.fspath(path)
        try:
            return cls.from_toml(text, origin)
        except ZombiesimError as e:
            if origin in str(e):
                raise
            # Key errors name the key but not the file: add it.
            raise make_error(type(e), f"{origin}: {e}", getattr(e, "kind", "config")) from e

    @classmethod
    def coerce(cls, value: Config | _core.Config | str | None) -> Config:
        """A `Config` from a `Config`, a `_core.Config`, a preset name or `None` (default)."""
        if isinstance(value, Config):
            return value
        if isinstance(value, _core.Config):
            return cls._wrap(value)
        if value is None:
            return cls.preset("default")
        if isinstance(value, str):
            return cls.preset(value)
        raise TypeError(f"expected a zombiesim.Config, got {type(value).__name__}")

    # -- deriving ----------------------------------------------------------------------------

    def override(
        self,
        settings: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
        where_read: Iterable[str] = (),
    ) -> Config:
        """A new config with dotted keys set, e.g. `{"gc.policy": "greedy",
        "flash.page_size": "16KiB", "ftl.over_provisioning": 0.28}`. Applied in order;
        the result is validated as a whole (unknown keys and impossible geometry raise
        `ConfigError` naming the key). A key the settings name that nothing in the result
        reads is refused; one they do not name (a preset's) goes back to its default, and
        `notes` says so.

        `where_read` lists named keys to drop (with a note) rather than refuse when
        nothing reads them: one cell of a comparison, where a `--set` value applies to
        the cells that read it (`ftl.cmt_entries` to the DFTL cell)."""
        pairs = self._pairs(settings)
        if not pairs:
            return self
        inner, notes = self._inner.set(pairs, list(where_read))
        return Config._wrap(inner, (*self._notes, *notes))

    @property
    def notes(self) -> tuple[str, ...]:
        """What deriving this config dropped, one line each (`run` and `compare` print
        them): values given by a preset or file to keys nothing in it reads."""
        return self._notes

    @staticmethod
    def _pairs(
        settings: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    ) -> list[tuple[str, str]]:
        """Checked `(key, TOML value)` pairs from what `override` takes."""
        if settings is None:
            return []
        if isinstance(settings, str | bytes):
            raise make_error(
                ConfigError,
                f"Config.override: expected a mapping of dotted keys to values, such as "
                f'{{"gc.policy": "greedy"}}, or (key, value) pairs; found the string {settings!r}',
                "config",
            )
        items = settings.items() if isinstance(settings, Mapping) else settings
        pairs = []
        for item in items:
            if not (isinstance(item, tuple | list) and len(item) == 2):
                raise make_error(
                    ConfigError,
                    f"Config.override: expected (key, value) pairs, found {item!r}",
                    "config",
                )
            key, value = str(item[0]), item[1]
            if value is None:
                raise make_error(
                    ConfigError, f"config key `{key}`: expected a value, found None", "config"
                )
            try:
                pairs.append((key, toml_value(value)))
            except TypeError as e:
                raise make_error(ConfigError, f"config key `{key}`: {e}", "config") from None
        return pairs

    def scheme(
        self,
        name: str,
        overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    ) -> Config:
        """A new config with a scheme's settings applied (see `zombiesim.schemes()`), then
        `overrides` (as `override` takes them), validated together: a scheme may need
        keys only the overrides give (`dgc` needs `device.buffer`)."""
        inner, notes = self._inner.apply_scheme(name, self._pairs(overrides))
        return Config._wrap(inner, (*self._notes, *notes))

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: str) -> Any:
        """The value at a dotted key as a Python value (a section comes back as a dict)."""
        return tomllib.loads(f"v = {self._inner.get(key)}")["v"]

    def get_toml(self, key: str) -> str:
        """The value at a dotted key as TOML text."""
        return self._inner.get(key)

    def to_toml(self) -> str:
        """The whole resolved configuration as TOML (loads back to an equal `Config`)."""
        return self._inner.to_toml()

    def to_json(self) -> str:
        return self._inner.to_json()

    def to_dict(self) -> dict[str, Any]:
        """The whole resolved configuration as nested dicts."""
        return json.loads(self._inner.to_json())

    @property
    def geometry(self) -> dict[str, Any]:
        """Derived sizes: planes, blocks, pages_per_block, page_size, physical_pages,
        logical_pages, gc_units, over_provisioning."""
        return json.loads(self._inner.geometry_json())

    @property
    def description(self) -> str:
        return self.get("description")

    @property
    def policy(self) -> str:
        return self.get("gc.policy")

    @property
    def core(self) -> _core.Config:
        """The underlying binding object (what `_core.simulate` takes)."""
        return self._inner

    # -- protocol ----------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Config is immutable; use .override() / .scheme()")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Config is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self.to_toml() == other.to_toml()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.to_toml())

    def __reduce__(self):
        return (Config.from_toml, (self.to_toml(), "<pickle>"))

    def __repr__(self) -> str:
        g = self.geometry
        return (
            f"Config(policy={self.policy!r}, op={self.get('ftl.over_provisioning')}, "
            f"blocks={g['blocks']}, pages_per_block={g['pages_per_block']}, "
            f"page_size={g['page_size']})"
        )

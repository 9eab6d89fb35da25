"""The settings a compile ran with, as its own compilation_metrics recorded them: the torch version
and the `dynamo_config` (every torch._dynamo.config value that is JSON: about 130 in torch 2.15).
A fix never asks for a setting the compile already had, and names a setting as that version
names it (diagnose/classify.py).

The config is read from disk when a fix is chosen (the index keeps it out of memory: 40 KB of a
45 KB metrics line, and its md5), once per distinct config text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from tlview.domain.role import Role
from tlview.source.trace_records import CONFIG_DIGEST

if TYPE_CHECKING:
    from tlview.domain.compile_node import Compile

UNKNOWN = object()  # a setting the compile's record does not tell

# Settings of torch._dynamo.config that tlview's fixes name, and the torch version each first has
# under that name (checked in the torch 2.13.0 and 2.15.0 installs: `hasattr(torch._dynamo.config,
# name)`; the older ones from PyTorch's history). Sets of functions are not in a recorded
# dynamo_config: for them the version decides.
SETTING_SINCE = {
    "allow_unspec_int_on_nn_module": (2, 1),
    "capture_scalar_outputs": (2, 0),
    "capture_dynamic_output_shape_ops": (2, 1),
    "reorderable_logging_functions": (2, 5),
    "ignore_logging_functions": (2, 11),  # was ignore_logger_methods (logger methods only)
    "recompile_limit": (2, 7),  # before: cache_size_limit
    "cache_size_limit": (2, 0),
    "automatic_dynamic_shapes": (2, 1),
    "specialize_int": (2, 0),
    "specialize_float": (2, 0),
}
_VERSION = re.compile(r"(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class CompileSettings:
    torch_version: tuple[int, int] | None  # (2, 15)
    config: dict[str, Any] | None  # the recorded dynamo_config; None: not in the logs (text, cut short, old torch)

    def value(self, name: str) -> Any:
        """The recorded value of torch._dynamo.config.`name`, else UNKNOWN."""
        if self.config is None or name not in self.config:
            return UNKNOWN
        return self.config[name]

    def has(self, name: str) -> bool | None:
        """Whether this torch has the setting: told by the recorded config for the JSON ones, by
        the version for the others. None: nothing tells."""
        if self.config is not None and name in self.config:
            return True
        since = SETTING_SINCE.get(name)
        if self.torch_version is None or since is None:
            return None if self.config is None else False
        return self.torch_version >= since

    @property
    def recompile_limit_name(self) -> str:
        """`recompile_limit`, or `cache_size_limit` where this torch still calls it that."""
        return "cache_size_limit" if self.has("recompile_limit") is False else "recompile_limit"

    @property
    def static_by_request(self) -> bool:
        """torch.compile(dynamic=False) (or the config it sets): sizes and ints never become dynamic
        by themselves. The compile's config records automatic_dynamic_shapes=False then."""
        return self.value("automatic_dynamic_shapes") is False


NOT_RECORDED = CompileSettings(None, None)


_FIELDS = ("dynamo_config", "pytorch_version")
# settings by the md5 its compile's metrics keep of their config and version (CONFIG_DIGEST)
_BY_DIGEST: dict[str | None, CompileSettings] = {}


def settings_of(compile_: Compile) -> CompileSettings:
    """The settings of a compile: read from its compilation_metrics (any attempt's, the last
    first), once per change of the compile; a compile with none (TORCH_LOGS text, a run cut
    short) has NOT_RECORDED."""
    cached = compile_.settings_read
    if cached is not None and cached[0] == compile_.revision:
        return cached[1]
    settings = NOT_RECORDED
    for node in reversed(compile_.attempts):
        found = next((a for a in node.artifacts_in(Role.METRICS) if a.name == "compilation_metrics"
                      and hasattr(a.source, "event_strings")), None)
        if found is None:
            continue
        digest = (node.metrics or {}).get(CONFIG_DIGEST)
        if (known := _BY_DIGEST.get(digest)) is not None:
            settings = known
            break
        try:
            fields = found.source.event_strings(found.rec, _FIELDS)
            if fields is None:  # not as plain strings: the record whole
                event = found.source.load_event(found.rec)
                fields = {name: event.get(name) for name in _FIELDS}
        except OSError:
            continue
        config, version = fields.get("dynamo_config"), fields.get("pytorch_version")
        settings = _settings(config if isinstance(config, str) else None,
                             version if isinstance(version, str) else None)
        if isinstance(digest, str) and isinstance(config, str):
            if len(_BY_DIGEST) >= 64:  # (a run's compiles share a handful)
                _BY_DIGEST.clear()
            _BY_DIGEST[digest] = settings
        break
    compile_.settings_read = (compile_.revision, settings)
    return settings


@lru_cache(maxsize=64)  # a run's compiles share a handful of configs: each is parsed once
def _settings(config_text: str | None, version: str | None) -> CompileSettings:
    config = None
    if config_text:
        try:
            parsed = orjson.loads(config_text)
        except orjson.JSONDecodeError:
            parsed = None
        config = parsed if isinstance(parsed, dict) else None
    m = _VERSION.match(version or "")
    return CompileSettings((int(m.group(1)), int(m.group(2))) if m else None, config)

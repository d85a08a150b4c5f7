"""The tool registry: tools registered at start-up, schemas checked then, one rule for who gets what.

Effective settings = the code's defaults (ToolExecutor.is_enabled / allowed_roles) overridden by the
admins' stored ToolSetting rows, so a change applies to the next message without a restart: the rows
are read again at once after a change made on this host (a marker file, change_markers.py), and at least
every SETTINGS_CHECK_SECONDS for a change made elsewhere (another host, or straight in the database).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError
from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.assistant.types import ToolSpec
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.models import ToolSetting

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


# Parameter schemas already checked in this process, as JSON text: an app made again (a test makes one
# per test) checks its built-in tools' schemas once, not again each time (~50 ms an app).
_CHECKED: set[str] = set()
_CHECKED_LOCK = threading.Lock()


def _check_schema(schema: dict) -> None:
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON at all: checked every time, never kept
        key = None
    with _CHECKED_LOCK:
        if key in _CHECKED:
            return
    Draft202012Validator.check_schema(schema)  # raises SchemaError; only a valid schema is kept
    if key is not None:
        with _CHECKED_LOCK:
            _CHECKED.add(key)


_SETTINGS = select(ToolSetting.tool_name, ToolSetting.enabled, ToolSetting.allowed_roles)
SETTINGS_CHECK_SECONDS = 5.0  # how long stored settings are trusted without a change marked on this host


@dataclass(frozen=True)
class _SettingsSeen:
    rows: tuple  # (tool_name, enabled, allowed_roles) as read
    marker: tuple[int, int] | None  # the change marker as it was just before the read
    read_at: float  # time.monotonic()


def _frozen(roles) -> tuple | None:
    return None if roles is None else tuple(sorted(roles))


class RegistryError(RuntimeError):
    """A tool cannot be registered; raised at start-up so a broken tool never ships silently."""


@dataclass(frozen=True)
class EffectiveSetting:
    enabled: bool
    allowed_roles: frozenset[str]
    overridden: bool


@dataclass(frozen=True)
class Toolbox:
    """The tools one user may use for one message. Worked out once per role and version of the
    settings (ToolRegistry.toolbox_for), so what every model call asks of it is made here once."""

    tools: tuple[ToolExecutor, ...]
    _by_name: dict[str, ToolExecutor] = field(init=False, repr=False, compare=False)
    _specs: tuple[ToolSpec, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {t.name: t for t in self.tools})
        specs = tuple(ToolSpec(t.name, t.description, t.parameters) for t in self.tools)
        object.__setattr__(self, "_specs", specs)

    def get(self, name: str) -> ToolExecutor | None:
        return self._by_name.get(name)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolExecutor] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._toolboxes: dict[tuple, Toolbox] = {}
        self._changes: ChangeMarker | None = None  # without one, the settings are read every time
        self._seen: _SettingsSeen | None = None  # replaced whole, never changed: no lock needed

    def watch_settings(self, changes: ChangeMarker) -> None:
        """Trust the settings read for a few seconds, and read them again when `changes` moves."""
        self._changes = changes

    def settings_changed(self) -> None:
        """An admin changed the settings (call after committing): every worker here reads them again."""
        if self._changes is not None:
            self._changes.mark()
        self._seen = None

    def register(self, tool: ToolExecutor) -> None:
        name = getattr(tool, "name", "")
        if not _NAME.match(name or ""):
            raise RegistryError(f"tool name {name!r} must be lower-case letters, digits and _")
        if name in self._tools:
            raise RegistryError(f"tool {name!r} is registered twice")
        schema = tool.parameters
        try:
            _check_schema(schema)
        except SchemaError as exc:
            raise RegistryError(f"tool {name!r} has an invalid parameter schema: {exc.message}") from exc
        if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
            raise RegistryError(
                f"tool {name!r}: parameters must be an object with additionalProperties: false"
            )
        missing = set(schema.get("required", [])) - set(schema.get("properties", {}))
        if missing:
            raise RegistryError(f"tool {name!r}: required fields not in properties: {sorted(missing)}")
        if not (tool.description or "").strip():
            raise RegistryError(f"tool {name!r} needs a description")
        for words in ("labels", "help"):
            pair = getattr(tool, words, None)
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(str(w).strip() for w in pair)):
                raise RegistryError(f"tool {name!r} needs {words}: (Chinese, English)")
        self._tools[name] = tool
        self._toolboxes.clear()  # a toolbox worked out before it lacks it
        self._validators[name] = Draft202012Validator(schema, format_checker=FormatChecker())

    def all(self) -> list[ToolExecutor]:
        return list(self._tools.values())

    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def get(self, name: str) -> ToolExecutor | None:
        return self._tools.get(name)

    def argument_errors(self, name: str, arguments: dict) -> list[str]:
        """Every schema violation, each with where it is, for the model to fix in one go."""
        errors = sorted(self._validators[name].iter_errors(arguments), key=lambda e: list(e.path))
        out = []
        for error in errors:
            where = "/".join(str(p) for p in error.path)[:80] or "(arguments)"
            # jsonschema quotes the offending value: a long one is cut, not sent back whole.
            message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
            out.append(f"{where}: {message}")
        return out

    def effective(self, tool: ToolExecutor, setting: ToolSetting | None) -> EffectiveSetting:
        enabled = tool.is_enabled()
        roles = tool.allowed_roles
        overridden = False
        if setting is not None:
            if setting.enabled is not None:
                enabled, overridden = setting.enabled, True
            if setting.allowed_roles is not None:
                roles, overridden = frozenset(setting.allowed_roles), True
        return EffectiveSetting(enabled, roles, overridden)

    def settings(self, session: Session) -> dict[str, ToolSetting]:
        return {s.tool_name: s for s in session.scalars(select(ToolSetting))}

    def permits(self, tool: ToolExecutor, setting: ToolSetting | None, role: str) -> bool:
        """The one rule: enabled (code default or admin override) and permitted for this role."""
        if not self.effective(tool, setting).enabled:
            return False
        if setting is not None and setting.allowed_roles is not None:
            return role in setting.allowed_roles
        return not tool.requires_permission() or tool.has_permission(role)

    def _settings_rows(self, session: Session) -> tuple:
        """The stored settings as plain rows: read again once they are SETTINGS_CHECK_SECONDS old or a
        change was marked. The marker is looked at before the read, so a change marked during it
        makes the next message read again."""
        if self._changes is None:
            return tuple(session.execute(_SETTINGS).all())
        marker, now = self._changes.current(), time.monotonic()
        seen = self._seen
        if seen is None or seen.marker != marker or now - seen.read_at >= SETTINGS_CHECK_SECONDS:
            seen = self._seen = _SettingsSeen(tuple(session.execute(_SETTINGS).all()), marker, now)
        return seen.rows

    def toolbox_for(self, role: str, session: Session) -> Toolbox:
        """This role's tools now (see the module's note on when settings are read again); the
        toolbox is worked out once per role and version of the settings."""
        rows = self._settings_rows(session)
        version = (role, tuple((r.tool_name, r.enabled, _frozen(r.allowed_roles)) for r in rows))
        toolbox = self._toolboxes.get(version)
        if toolbox is None:
            stored = {r.tool_name: r for r in rows}
            toolbox = Toolbox(
                tuple(t for t in self._tools.values() if self.permits(t, stored.get(t.name), role))
            )
            if len(self._toolboxes) > 64:  # versions replaced by admins: the memory stays bounded
                self._toolboxes.clear()
            self._toolboxes[version] = toolbox
        return toolbox

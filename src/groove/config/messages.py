"""Turning pydantic validation errors into one-line :class:`~groove.errors.ConfigError` messages.

Every refusal names the dotted key, the bad value, what is accepted and where
it came from.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic.fields import FieldInfo

from groove.errors import ConfigError, did_you_mean


def _show(value: Any) -> str:
    """Render a value the way the user wrote it in TOML (roughly)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, Path):
        text = json.dumps(str(value), ensure_ascii=False)
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(_show(v) for v in value) + "]"
    elif isinstance(value, Mapping):
        text = "{" + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + "}"
    else:
        text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _lookup(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _submodel(info: FieldInfo) -> type[BaseModel] | None:
    ann = info.annotation
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _walk(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The model owning the last key of ``loc`` and that key's FieldInfo."""
    model: type[BaseModel] | None = root
    owner, info = root, None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None:
            break
        found = _lookup(model, part)
        if found is None:
            return model, None
        owner, info, model = model, found, _submodel(found)
    return owner, info


def _toml_keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _describe(err: Mapping[str, Any], where: str, root: type[BaseModel]) -> str:
    loc = tuple(err["loc"])
    key = _dotted(loc)
    if err["type"] == "extra_forbidden":
        owner: type[BaseModel] | None = root
        if loc[:-1]:
            parent = _walk(root, loc[:-1])[1]
            owner = _submodel(parent) if parent is not None else None
        section = f"in [{_dotted(loc[:-1])}]" if loc[:-1] else "at top level"
        names = _toml_keys(owner) if owner else []
        hint = did_you_mean(str(loc[-1]), names)
        return (f"{where}: unknown key {key} = {_show(err.get('input'))}{hint}; accepted "
                f"{section}: {', '.join(names) or '?'}")
    _, info = _walk(root, loc)
    accepted = info.description if info is not None and info.description else "see groove.toml.example"
    if err["type"] == "finite_number":
        problem = "nan and inf are refused"
    elif err["type"] == "missing":
        return f"{where}: {key} is required; accepted: {accepted}"
    else:
        # A validator's own "; accepted: …" is said once, by the field's description below.
        problem = str(err["msg"]).removeprefix("Value error, ").split("; accepted: ")[0]
    return f"{where}: {key} = {_show(err.get('input'))} is refused ({problem}); accepted: {accepted}"


def _validate(model: type[BaseModel], data: Mapping[str, Any], where: str) -> Any:
    """Validate ``data`` as ``model``; every problem becomes one line of a ConfigError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [_describe(err, where, model) for err in exc.errors(include_url=False)]
        raise ConfigError("\n".join(lines)) from None


# --------------------------------------------------------------------------- discovery



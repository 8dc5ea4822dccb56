"""ROS 2 ``.msg`` definitions as Cyclone DDS types: the ``.msg`` files are the one source of the wire's layout.

A message ``<package>/msg/<Type>.msg`` becomes an :class:`cyclonedds.idl.IdlStruct` dataclass whose DDS type name
is ROS 2's, ``<package>::msg::dds_::<Type>_``, so a ROS 2 graph on the same domain (rmw_cyclonedds) sees the same
types on the same topics (``rt/<name>``). What is read: one field per line, ``<type> <name> [default]``, with ``#``
comments; primitive types, ``string``, nested messages (``pkg/Type`` or a bare ``Type`` of the same package),
unbounded ``T[]`` and fixed ``T[N]`` arrays. Constants (``TYPE NAME=value``) and bounded types are refused.
"""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as idl

#: Where the standard and the project's own messages live (``<package>/msg/<Type>.msg``).
COMMON_MSG_DIR = Path(__file__).resolve().parent / "msg"

_PRIMITIVES: dict[str, tuple[Any, Any]] = {
    "bool": (bool, False),
    "byte": (idl.uint8, 0),
    "char": (idl.uint8, 0),
    "int8": (idl.int8, 0),
    "uint8": (idl.uint8, 0),
    "int16": (idl.int16, 0),
    "uint16": (idl.uint16, 0),
    "int32": (idl.int32, 0),
    "uint32": (idl.uint32, 0),
    "int64": (idl.int64, 0),
    "uint64": (idl.uint64, 0),
    "float32": (idl.float32, 0.0),
    "float64": (idl.float64, 0.0),
    "string": (str, ""),
}
_FIELD = re.compile(
    r"^(?P<type>[A-Za-z][\w/]*)(?P<array>\[(?P<size>\d*)\])?\s+(?P<name>[a-z][a-z0-9_]*)(\s+(?P<default>\S+))?$"
)


class MessageError(ValueError):
    """A ``.msg`` file is missing or cannot be read."""


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of a message: its ROS type (``pkg/Type`` for a message), array size (``None``: scalar, ``-1``:
    unbounded) and default text."""

    name: str
    type: str
    array: int | None = None
    default: str | None = None


def parse_msg(text: str, package: str) -> list[Field]:
    """The fields of a ``.msg`` text of ``package`` (nested types qualified with their package).

    Raises:
        MessageError: A line that is not a field this reader takes.
    """
    fields = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _FIELD.match(line)
        if match is None or "=" in line:
            raise MessageError(f"line {number}: {raw.strip()!r} is not a field ('<type> <name> [default]')")
        kind = match["type"]
        if kind not in _PRIMITIVES and "/" not in kind:
            kind = f"{package}/{kind}"
        size = None if match["array"] is None else (int(match["size"]) if match["size"] else -1)
        fields.append(Field(match["name"], kind, size, match["default"]))
    return fields


def dds_type_name(message: str) -> str:
    """ROS 2's DDS name of ``pkg/Type``: ``pkg::msg::dds_::Type_``."""
    package, name = message.split("/")
    return f"{package}::msg::dds_::{name}_"


class MessageTypes:
    """Loads ``<package>/msg/<Type>.msg`` files from folders (the first that has one wins) as DDS types.

    Args:
        msg_dirs: Folders holding ``<package>/msg/*.msg``; :data:`COMMON_MSG_DIR` is searched last.
    """

    def __init__(self, msg_dirs: Iterable[str | Path] = ()):
        self.msg_dirs = [Path(d) for d in msg_dirs] + [COMMON_MSG_DIR]
        self._types: dict[str, type] = {}

    def path(self, message: str) -> Path:
        """The ``.msg`` file of ``pkg/Type``.

        Raises:
            MessageError: No folder holds it.
        """
        package, name = message.split("/")
        for folder in self.msg_dirs:
            candidate = folder / package / "msg" / f"{name}.msg"
            if candidate.is_file():
                return candidate
        raise MessageError(f"no {package}/msg/{name}.msg in {', '.join(map(str, self.msg_dirs))}")

    def fields(self, message: str) -> list[Field]:
        """The parsed fields of ``pkg/Type``."""
        path = self.path(message)
        try:
            return parse_msg(path.read_text(), message.split("/")[0])
        except MessageError as exc:
            raise MessageError(f"{path}: {exc}") from None

    def get(self, message: str) -> type:
        """The :class:`IdlStruct` dataclass of ``pkg/Type`` (built once)."""
        if message not in self._types:
            self._types[message] = self._build(message)
        return self._types[message]

    def closure(self, message: str) -> list[str]:
        """``message`` and every message it nests, each once."""
        seen: list[str] = []

        def visit(name: str) -> None:
            if name in seen:
                return
            seen.append(name)
            for field in self.fields(name):
                if field.type not in _PRIMITIVES:
                    visit(field.type)

        visit(message)
        return seen

    def _build(self, message: str) -> type:
        annotations: dict[str, Any] = {}
        defaults: dict[str, Any] = {}
        for field in self.fields(message):
            if field.type in _PRIMITIVES:
                element, zero = _PRIMITIVES[field.type]
                if field.default is not None:
                    zero = type(zero)(float(field.default)) if not isinstance(zero, str) else field.default
            else:
                element = self.get(field.type)
                zero = None
            if field.array is None:
                annotations[field.name] = element
                defaults[field.name] = (
                    dataclasses.field(default_factory=element) if zero is None else dataclasses.field(default=zero)
                )
            else:
                annotations[field.name] = idl.sequence[element] if field.array < 0 else idl.array[element, field.array]
                size, make = field.array, (element if zero is None else (lambda z=zero: z))
                defaults[field.name] = dataclasses.field(
                    default_factory=(list if size < 0 else (lambda n=size, m=make: [m() for _ in range(n)]))
                )

        def body(namespace: dict[str, Any]) -> None:
            namespace["__annotations__"] = annotations
            namespace.update(defaults)

        cls = types.new_class(message.split("/")[1], (IdlStruct,), {"typename": dds_type_name(message)}, body)
        return dataclasses.dataclass(cls)

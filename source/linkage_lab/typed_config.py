"""Robot configs as frozen, validated dataclasses: a YAML mapping parsed once, checked key by key.

A robot declares its config as nested frozen dataclasses whose field names are the YAML keys (units
in the names: ``thigh_length_m``, ``peak_nm``). :func:`parse` builds one from the parsed YAML and
checks every key: unknown and missing keys, types, and ranges declared with :func:`positive`,
:func:`nonnegative` or :func:`within`. Every error is a :class:`~linkage_lab.config.ConfigError`
naming the file and the dotted key, e.g. ``configs/robots/limit.yaml: geometry.thigh_length_m:
must be > 0, got -0.1``.

Supported field types: ``float``, ``int``, ``str``, ``bool``, ``tuple[float, ...]``, fixed tuples
such as ``tuple[float, float, float]``, ``dict[str, T]``, ``T | None``, ``Literal[...]``, nested
dataclasses, and ``Any`` for a section whose own module checks it. An ``int`` is accepted where a
``float`` is expected.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from linkage_lab.config import ConfigError

#: A point or direction in a robot frame (m or unitless).
Vector3 = tuple[float, float, float]


def within(low: float | None = None, high: float | None = None, *, open_low: bool = False) -> Any:
    """A dataclass field whose number must lie in ``[low, high]`` (``(low, high]`` with ``open_low``).

    For tuples and mappings of numbers the bound applies to each element.
    """
    return dataclasses.field(metadata={"range": (low, high, open_low)})


def positive() -> Any:
    """A field that must be > 0."""
    return within(0.0, None, open_low=True)


def nonnegative() -> Any:
    """A field that must be ≥ 0."""
    return within(0.0, None)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Randomization:
    """A robot config's ``randomization`` section: the ranges training draws each env's constants from.

    Attributes:
        armature_scale: ``[low, high]`` scale of every joint's armature (reflected rotor inertia).
        motor_gain_scale: ``[low, high]`` scale of every joint's PD gains (motor strength and driver gains).
        joint_friction_nm: ``[low, high]`` friction added at every joint (N·m, and N·m·s/rad viscous).
        ground_friction: ``[low, high]`` static friction of the feet on the ground (dynamic: 0.75 × static).
    """

    armature_scale: tuple[float, float] = positive()
    motor_gain_scale: tuple[float, float] = positive()
    joint_friction_nm: tuple[float, float] = nonnegative()
    ground_friction: tuple[float, float] = positive()


@dataclasses.dataclass(frozen=True, kw_only=True)
class SensorNoise:
    """A robot config's ``sensors`` section: how far each reading an actor observes is from the truth.

    Training corrupts the actor's observations with it; each value is the half-width of a uniform draw (Isaac Lab's
    convention for observation noise), per axis or per joint.

    Attributes:
        gyro_noise_radps: The gyro's white noise, drawn every control step.
        gyro_bias_radps: The gyro's bias, drawn per env at each reset and held for the episode (0: none).
        gravity_noise: White noise on each component of the gravity direction in the base frame (unitless).
        joint_pos_noise_rad: White noise on each joint angle.
        joint_vel_noise_radps: White noise on each joint rate the actor observes (a training margin).
        encoder_rate_noise_radps: White noise on each motor driver's speed reading on the robot: what a closed-chain
            run reads (:class:`~linkage_lab.sim2sim.sensors.SensorNoiseModel`) and the base-velocity estimator and
            the ankle bridge's host loop take in. Training does not use it; its joint-rate margin covers it.
    """

    gyro_noise_radps: float = nonnegative()
    gyro_bias_radps: float = nonnegative()
    gravity_noise: float = nonnegative()
    joint_pos_noise_rad: float = nonnegative()
    joint_vel_noise_radps: float = nonnegative()
    encoder_rate_noise_radps: float = nonnegative()


def parse[T](cls: type[T], data: Any, source: str | Path, key: str = "") -> T:
    """Build dataclass ``cls`` from a parsed YAML mapping, checking every key.

    Args:
        cls: A (frozen) dataclass whose field names are the mapping's keys.
        data: The mapping.
        source: The file it came from (for the error message).
        key: Dotted key of ``data`` inside the file ("" for the top level).

    Raises:
        ConfigError: A key is unknown or missing, or a value has the wrong type or range.
    """
    return _parse_dataclass(cls, data, str(source), key)


def _fail(source: str, key: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {key or '<top level>'}: {message}")


def _parse_dataclass(cls: type, data: Any, source: str, key: str) -> Any:
    if not isinstance(data, Mapping):
        raise _fail(source, key, f"expected a mapping of {', '.join(f.name for f in dataclasses.fields(cls))}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise _fail(source, _join(key, unknown[0]), f"unknown key (expected one of {', '.join(fields)})")
    values = {}
    for name, field in fields.items():
        sub = _join(key, name)
        if name not in data:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise _fail(source, sub, "missing")
            continue
        value = _parse_value(hints[name], data[name], source, sub)
        _check_range(field, value, source, sub)
        values[name] = value
    try:
        return cls(**values)
    except ValueError as exc:  # a cross-field check of the dataclass
        raise _fail(source, key, str(exc)) from None


def _parse_value(hint: Any, value: Any, source: str, key: str) -> Any:
    if hint is Any:
        return value  # a section another module owns and checks (e.g. a linkage's geometry presets)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _parse_value(inner, value, source, key)
    if dataclasses.is_dataclass(hint):
        return _parse_dataclass(hint, value, source, key)
    if origin is typing.Literal:
        if value not in args:
            raise _fail(source, key, f"must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _fail(source, key, f"expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_parse_value(args[0], v, source, f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _fail(source, key, f"expected {len(args)} values, got {len(value)}")
        return tuple(
            _parse_value(a, v, source, f"{key}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise _fail(source, key, f"expected a mapping, got {value!r}")
        return {str(k): _parse_value(args[1], v, source, _join(key, str(k))) for k, v in value.items()}
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _fail(source, key, f"expected a finite number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(source, key, f"expected an integer, got {value!r}")
        return value
    if hint in (str, bool):
        if not isinstance(value, hint):
            raise _fail(source, key, f"expected a {hint.__name__}, got {value!r}")
        return value
    raise TypeError(f"typed_config: unsupported field type {hint!r} at {key}")


def _check_range(field: dataclasses.Field, value: Any, source: str, key: str) -> None:
    bounds = field.metadata.get("range")
    if bounds is None or value is None:
        return
    low, high, open_low = bounds
    numbers = value.values() if isinstance(value, Mapping) else value if isinstance(value, tuple) else (value,)
    for number in numbers:
        if low is not None and (number <= low if open_low else number < low):
            raise _fail(source, key, f"must be {'>' if open_low else '>='} {low:g}, got {number:g}")
        if high is not None and number > high:
            raise _fail(source, key, f"must be <= {high:g}, got {number:g}")


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name

"""The robot registry: what the generic machinery may know about a robot, asked by name.

Each robot is one package, ``linkage_lab.robots.<robot>``, whose ``__init__`` defines ``SPEC``, a
:class:`RobotSpec`. The registry finds those packages itself (nothing lists them by hand); code
outside ``robots/`` asks :func:`get_robot` or :func:`robot_for_joints` and calls the spec's
capabilities. A robot without a capability raises :class:`MissingCapability` naming the field to
fill, never a silent fallback. A robot defined elsewhere (a user's package, a test) joins with
:func:`register_robot`.

The spec itself imports nothing heavy: every capability is a callable that imports what it needs
(Isaac Lab only for the articulation), so the registry works in the torch-free deploy code and in
the math's unit tests.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from linkage_lab.actuators.transmissions import register_transmissions
from linkage_lab.config import load_config_file
from linkage_lab.paths import ROBOT_CONFIG_DIR, repo_relative
from linkage_lab.typed_config import parse


class UnknownRobot(KeyError):
    """No robot of that name (or with those joints) is registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class MissingCapability(LookupError):
    """The robot is registered but lacks what the caller needs (the message names the spec field)."""


@dataclass(frozen=True)
class DeployFiles:
    """A robot's robot-side files for one exported bundle (what ``RobotSpec.deploy`` returns).

    Attributes:
        write: ``(bundle folder, metadata) -> {relative path: description}``: writes the files.
        metadata: Keys it adds to the bundle's metadata.
        readme: A section for the bundle's README (Markdown), or empty.
    """

    write: Callable[[Path, dict[str, Any]], dict[str, str]]
    metadata: dict[str, Any] = field(default_factory=dict)
    readme: str = ""


@dataclass(frozen=True)
class RobotSpec:
    """Everything the project's generic code may ask about one robot.

    Attributes:
        name: The robot's name: its package, its config ``<name>.yaml`` and its asset folder.
        config_path: The robot's YAML config (the one source of truth).
        joint_names: The policy's joint order (actions and observations), pinned on the articulation.
        joint_ids: The robot's own joint numbering in that order (the wire ids of its deploy code), if any.
        config_type: The frozen dataclass the config parses into (:mod:`linkage_lab.typed_config`).
        description: ``(typed config) -> RobotModel``: the serial description the URDF/USD is made from.
        articulation: ``(**options) -> ArticulationCfg`` (imports Isaac Lab when called).
        transmissions: Named linkage transmissions the robot's actuators refer to, name → factory
            ``(preset=None) -> Transmission``; a name is global, so it carries the robot's name.
        rsu_ankles: The robot's two-motor RSU ankles, ``{side: (pitch joint, roll joint)}``; their
            geometry is the config's ``ankle_linkage`` section (empty: no RSU ankle). The eval replays
            their poses and torques through the real linkage, the export adds their geometry preset.
        scripted_gait: ``(joint_names, **options) -> ScriptedGaitPolicy``: the robot's scripted gait for
            velocity commands (the reference and the eval's ``--policy scripted``).
        sprint_gait: ``(**options) -> ScriptedGaitPolicy`` for the sprint (``None``: no sprint).
        deploy: ``(policy metadata) -> DeployFiles``: the robot-side files of an exported bundle
            (``None``: the robot has none; export then needs ``--skip-deploy``).
        closed_chain: ``(**options) -> ClosedChainModel``: the robot with its linkages closed (rods, motor
            joints, loop equalities) as a MuJoCo model, for sim-to-sim (``None``: not built).
        extras: Named robot-specific data for tools (e.g. a leg body for S3N), looked up with
            :meth:`extra`.
        asset_dir: Folder of the generated ``<name>/`` URDF/USD; ``None``: the project's ``assets/``.
    """

    name: str
    config_path: Path
    joint_names: tuple[str, ...]
    config_type: type
    description: Callable[[Any], Any]
    articulation: Callable[..., Any]
    joint_ids: tuple[int, ...] | None = None
    transmissions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    rsu_ankles: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    scripted_gait: Callable[..., Any] | None = None
    sprint_gait: Callable[..., Any] | None = None
    deploy: Callable[[dict[str, Any]], DeployFiles] | None = None
    closed_chain: Callable[..., Any] | None = None
    extras: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    asset_dir: Path | None = None

    def require(self, capability: str) -> Callable[..., Any]:
        """The callable of ``capability`` (a field name); raises :class:`MissingCapability` if unset."""
        names = {f.name for f in fields(self)}
        if capability not in names:
            raise AttributeError(f"RobotSpec has no field {capability!r}; fields: {', '.join(sorted(names))}")
        value = getattr(self, capability)
        if value is None:
            raise MissingCapability(
                f"robot {self.name!r} has no {capability} "
                f"(set RobotSpec.{capability} in linkage_lab.robots.{self.name})"
            )
        return value

    def extra(self, key: str) -> Callable[..., Any]:
        """The robot-specific callable ``extras[key]``; raises :class:`MissingCapability` if absent."""
        if key not in self.extras:
            known = ", ".join(sorted(self.extras)) or "none"
            raise MissingCapability(f"robot {self.name!r} provides no {key!r} (its extras: {known})")
        return self.extras[key]

    def config(self) -> Any:
        """The robot's config as its :attr:`config_type`, parsed and checked once (cached; frozen).

        Raises:
            ConfigError: The file is missing, not YAML, or a key is unknown, missing or out of range
                (the message names the file and the key).
        """
        return _typed_config(self.config_type, Path(self.config_path).resolve())

    def description_model(self) -> Any:
        """The robot's serial description (:class:`~linkage_lab.description.model.RobotModel`) from its config."""
        return self.description(self.config())


@functools.lru_cache(maxsize=32)
def _typed_config(config_type: type, path: Path) -> Any:
    return parse(config_type, load_config_file(path), repo_relative(path))


_REGISTRY: dict[str, RobotSpec] = {}
_DISCOVERED = False
_LOCK = threading.Lock()


def register_robot(spec: RobotSpec, replace: bool = False) -> RobotSpec:
    """Add ``spec`` to the registry; returns it.

    Raises:
        ValueError: A robot of that name is already registered (and not ``replace``), or one of its
            transmission names is another robot's.
    """
    with _LOCK:
        if spec.name in _REGISTRY and not replace and _REGISTRY[spec.name] is not spec:
            raise ValueError(f"robot {spec.name!r} is already registered")
        for other in _REGISTRY.values():
            clash = set(other.transmissions) & set(spec.transmissions) if other.name != spec.name else set()
            if clash:
                raise ValueError(f"robot {spec.name!r} registers transmission(s) {sorted(clash)} of {other.name!r}")
        register_transmissions(spec.transmissions, f"robot {spec.name!r}", replace=replace)
        _REGISTRY[spec.name] = spec
    return spec


def _discover() -> None:
    """Import every ``linkage_lab.robots.<robot>`` package once; each registers its ``SPEC``."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    package = importlib.import_module("linkage_lab.robots")
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"linkage_lab.robots.{info.name}")
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, RobotSpec):
            raise TypeError(f"linkage_lab.robots.{info.name} defines no SPEC (a RobotSpec)")
        if spec.name != info.name:
            raise ValueError(f"linkage_lab.robots.{info.name}.SPEC is named {spec.name!r}; it must match its package")
        register_robot(spec, replace=True)


def robot_names() -> list[str]:
    """Names of the registered robots."""
    _discover()
    return sorted(_REGISTRY)


def get_robot(name: str) -> RobotSpec:
    """The spec of robot ``name``; raises :class:`UnknownRobot` listing the registered ones."""
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownRobot(f"unknown robot {name!r}; registered: {', '.join(sorted(_REGISTRY))}") from None


def robot_for_joints(joint_names: list[str] | tuple[str, ...], any_order: bool = False) -> RobotSpec:
    """The robot whose policy joint order is exactly ``joint_names`` (or, ``any_order``, its joint set).

    Raises:
        UnknownRobot: No registered robot has those joints in that order.
    """
    _discover()
    names = tuple(joint_names)
    for spec in _REGISTRY.values():
        if spec.joint_names == names or any_order and sorted(spec.joint_names) == sorted(names):
            return spec
    preview = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    raise UnknownRobot(
        f"no registered robot has the joints ({preview}) in that order; registered: {', '.join(sorted(_REGISTRY))}"
    )


def robots_with(capability: str) -> list[str]:
    """Names of the registered robots that have ``capability``: a :class:`RobotSpec` field that is set,
    or a key of its ``extras``. Tools that need one robot use it to pick their default."""
    _discover()
    names = {f.name for f in fields(RobotSpec)}
    found = []
    for name, spec in sorted(_REGISTRY.items()):
        if capability in names and getattr(spec, capability) not in (None, {}) or capability in spec.extras:
            found.append(name)
    return found


def sole_robot_with(capability: str) -> str:
    """The one registered robot with ``capability`` (see :func:`robots_with`).

    Raises:
        MissingCapability: None has it, or several do (then the caller must name the robot).
    """
    found = robots_with(capability)
    if len(found) != 1:
        have = ", ".join(found) if found else "none"
        raise MissingCapability(f"expected one registered robot with {capability!r}, found {have}: name the robot")
    return found[0]


def robot_config_path(name: str) -> Path:
    """The config file of robot ``name``: its registered ``RobotSpec.config_path``, else
    ``configs/robots/<name>.yaml``."""
    try:
        return get_robot(name).config_path
    except UnknownRobot:
        return ROBOT_CONFIG_DIR / f"{name}.yaml"


def load_robot_config(name: str) -> dict[str, Any]:
    """Return a fresh copy of robot ``name``'s config (see :func:`robot_config_path`) as nested dicts.

    Args:
        name: Robot name, a registered robot's or one of ``configs/robots``.

    Returns:
        The parsed config. The caller may mutate it: every call returns a deep copy.

    Raises:
        ConfigError: The file is missing or not a YAML mapping.
    """
    return load_config_file(robot_config_path(name))

"""An exported bundle read for sim-to-sim: its metadata checked, and its policy run as the robot would run it.

:func:`load_bundle` reads ``metadata.json`` and checks what the runner relies on, with one clear error
(:class:`BundleError`) per problem. :class:`BundlePolicy` is the generic robot-side policy loop of a bundle:
the observation in the metadata's ``observation_layout`` from sensed values, ``policy.onnx`` through
onnxruntime, and the joint targets ``q*`` (the metadata's action mapping, or a residual bundle's gait
through :class:`~linkage_lab.deploy.residual_gait.ResidualGaitComposer`). A robot whose bundle has its own
deploy module (its wire mapping) may use that instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.deploy.gait_clock import CLOCK_FUNCTION, GaitClock, clock_frequency
from linkage_lab.deploy.onnx_session import cpu_session
from linkage_lab.deploy.target_filter import TargetFilter

METADATA_FILE = "metadata.json"
POLICY_FILE = "policy.onnx"
#: Keys of ``metadata.json`` the runner needs.
REQUIRED_KEYS = (
    "robot",
    "task",
    "control_period_s",
    "joint_names",
    "default_joint_pos",
    "action_scale",
    "action_offset",
    "kp",
    "kd",
    "observation_layout",
)
#: Observation functions (Isaac Lab's term functions, by name) the generic loop builds, and the sensed
#: value each reads.
SENSED_TERMS = {
    "base_lin_vel": "the base-velocity estimator (IMU + leg kinematics + contact) in the base frame",
    "base_ang_vel": "IMU gyro",
    "projected_gravity": "IMU orientation: gravity in the base frame",
    "generated_commands": "the velocity command",
    "joint_pos_rel": "joint angles from the motor encoders (the bundle's FK) minus the default pose",
    "joint_vel_rel": "joint rates from the motor speeds (the bundle's velocity map)",
    "last_action": "the previous raw action (clipped)",
    "previous_action": "the raw action before the previous one (clipped)",
}


class BundleError(ValueError):
    """A bundle that cannot be run: missing, unreadable, or its metadata lacks or garbles a field."""


@dataclass(frozen=True)
class Bundle:
    """An exported bundle folder and its metadata.

    Attributes:
        path: The bundle folder.
        metadata: ``metadata.json``, checked by :func:`load_bundle`.
    """

    path: Path
    metadata: dict[str, Any]

    @property
    def robot(self) -> str:
        """The robot the policy was trained for."""
        return str(self.metadata["robot"])

    @property
    def control_period_s(self) -> float:
        """The policy's period (s)."""
        return float(self.metadata["control_period_s"])

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The policy's joint order."""
        return tuple(self.metadata["joint_names"])

    def file(self, relative: str) -> Path:
        """A file of the bundle; raises :class:`BundleError` when it is missing."""
        path = self.path / relative
        if not path.is_file():
            raise BundleError(f"bundle {self.path} lacks {relative}")
        return path


def load_bundle(path: str | Path) -> Bundle:
    """Read and check a bundle folder (``metadata.json`` and ``policy.onnx``).

    Raises:
        BundleError: The folder or a file is missing, the metadata is not a JSON object, a required key is
            missing, or a per-joint list has the wrong length or a non-finite value.
    """
    path = Path(path).expanduser()
    if path.is_file():
        inside = (path.parent / METADATA_FILE).is_file()
        raise BundleError(
            f"{path} is a file; --bundle takes the bundle folder that linkage-lab export wrote (with "
            f"{METADATA_FILE} and policy.onnx)" + (f": {path.parent}" if inside else "")
        )
    if not path.is_dir():
        raise BundleError(f"bundle folder {path} does not exist (make one with linkage-lab export)")
    metadata_path = path / METADATA_FILE
    if not metadata_path.is_file():
        raise BundleError(f"{path} is not a bundle: it has no {METADATA_FILE} (make one with linkage-lab export)")
    try:
        metadata = json.loads(metadata_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{metadata_path} is not readable JSON: {exc}") from exc
    if not isinstance(metadata, dict):
        raise BundleError(f"{metadata_path} must hold a JSON object, not {type(metadata).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in metadata]
    if missing:
        raise BundleError(f"{metadata_path} lacks {', '.join(missing)}")
    period = metadata["control_period_s"]
    if not isinstance(period, (int, float)) or not period > 0:
        raise BundleError(f"{metadata_path}: control_period_s must be a positive number, got {period!r}")
    names = metadata["joint_names"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise BundleError(f"{metadata_path}: joint_names must be a list of joint names")
    for key in ("default_joint_pos", "action_scale", "action_offset", "kp", "kd"):
        values = metadata[key]
        if not isinstance(values, list) or len(values) != len(names):
            raise BundleError(f"{metadata_path}: {key} needs {len(names)} values (one per joint)")
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            raise BundleError(f"{metadata_path}: {key} has a value that is not a finite number")
    if not isinstance(metadata["observation_layout"], list):
        raise BundleError(f"{metadata_path}: observation_layout must be a list of terms")
    bundle = Bundle(path.resolve(), metadata)
    bundle.file(POLICY_FILE)
    return bundle


#: Training functions that stand for a sensed value: on the robot the base-velocity estimate *is* the estimator's
#: output (training only adds its measured error to the truth).
FUNCTION_ALIASES = {"base_lin_vel_estimate": "base_lin_vel"}


def _function_name(term: Mapping[str, Any]) -> str:
    name = str(term.get("function", term["name"])).rsplit(".", 1)[-1]
    return FUNCTION_ALIASES.get(name, name)


class ObservationBuilder:
    """The policy observation of a bundle's ``observation_layout`` from sensed values.

    Args:
        layout: The metadata's ``observation_layout`` (terms in order: ``name``, ``size``, ``scale``,
            ``clip``, ``function``).
        extra_terms: Terms the generic loop does not know, by term name → ``() -> values`` (e.g. a
            residual gait's phase).

    Raises:
        BundleError: A term is neither sensed (:data:`SENSED_TERMS`) nor in ``extra_terms``, or has a history.
    """

    def __init__(self, layout: list[Mapping[str, Any]], extra_terms: Mapping[str, Callable[[], np.ndarray]]):
        self.terms = list(layout)
        self.extra_terms = dict(extra_terms)
        for term in self.terms:
            if int(term.get("history_length") or 0) > 0:
                raise BundleError(f"observation term {term['name']!r} has a history, which sim2sim does not build")
            if _function_name(term) not in SENSED_TERMS and term["name"] not in self.extra_terms:
                known = ", ".join([*SENSED_TERMS, *self.extra_terms])
                raise BundleError(
                    f"observation term {term['name']!r} ({term.get('function')}) is unknown; known: {known}"
                )

    @property
    def size(self) -> int:
        """Length of the observation vector."""
        return sum(int(term["size"]) for term in self.terms)

    def sources(self) -> dict[str, str]:
        """Each term's name → where its values come from, in words."""
        return {t["name"]: SENSED_TERMS.get(_function_name(t), "the robot side's own state") for t in self.terms}

    def build(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """The observation, float32 ``(size,)``, from ``values`` by function name (:data:`SENSED_TERMS`)."""
        parts = []
        for term in self.terms:
            function = _function_name(term)
            raw = self.extra_terms[term["name"]]() if term["name"] in self.extra_terms else values[function]
            value = np.asarray(raw, dtype=np.float64).reshape(-1)
            if value.size != int(term["size"]):
                raise BundleError(f"observation term {term['name']!r}: {value.size} values, expected {term['size']}")
            value = value * np.asarray(term.get("scale", 1.0) if term.get("scale") is not None else 1.0)
            if term.get("clip") is not None:
                value = np.clip(value, *term["clip"])
            parts.append(value)
        return np.concatenate(parts).astype(np.float32)


class BundlePolicy:
    """A bundle's policy loop: observation → ``policy.onnx`` → joint targets ``q*`` (rad, policy order).

    As in training: the raw action is clipped to ``±action_clip``, a non-finite action is replaced by zeros
    (the default pose, or the gait alone); ``q* = action_offset + action_scale · a`` clipped to
    ``action_target_clip`` and smoothed by the bundle's target filter
    (:class:`~linkage_lab.deploy.target_filter.TargetFilter`), or for a residual bundle (metadata
    ``residual_gait``) the gait's targets plus ``action_scale · a``.

    Args:
        bundle: The bundle.

    Raises:
        BundleError: The policy's input or output width does not fit the metadata.
    """

    def __init__(self, bundle: Bundle):

        self.bundle = bundle
        metadata = bundle.metadata
        self.session = cpu_session(bundle.file(POLICY_FILE))
        self.composer = None
        extra: dict[str, Callable[[], np.ndarray]] = {}
        if metadata.get("residual_gait") is not None:
            from linkage_lab.deploy.residual_gait import ResidualGaitComposer

            bundle.file(metadata["residual_gait"]["file"])
            self.composer = ResidualGaitComposer(bundle.path)
            extra[metadata["residual_gait"]["observation_term"]] = self.composer.observation
        #: The gait clock of a clock-trained policy (its observation term's ``params.frequency_hz``), else ``None``.
        self.clock: GaitClock | None = None
        for term in metadata["observation_layout"]:
            if _function_name(term) == CLOCK_FUNCTION:
                try:
                    self.clock = GaitClock(bundle.control_period_s, clock_frequency(term))
                except ValueError as exc:
                    raise BundleError(f"{bundle.path / METADATA_FILE}: {exc}") from exc
                extra[term["name"]] = self.clock.observation
        self.observation = ObservationBuilder(metadata["observation_layout"], extra)
        widths = {i.name: i.shape[-1] for i in self.session.get_inputs()} | {
            o.name: o.shape[-1] for o in self.session.get_outputs()
        }
        for name, expected in (("obs", self.observation.size), ("actions", len(bundle.joint_names))):
            if name not in widths:
                raise BundleError(f"{bundle.path / POLICY_FILE} has no {name!r} input/output")
            if isinstance(widths[name], int) and widths[name] != expected:
                raise BundleError(
                    f"{bundle.path / POLICY_FILE}: {name} has width {widths[name]}, metadata says {expected}"
                )
        self.default_joint_pos = np.asarray(metadata["default_joint_pos"], dtype=np.float64)
        self.action_scale = np.asarray(metadata["action_scale"], dtype=np.float64)
        self.action_offset = np.asarray(metadata["action_offset"], dtype=np.float64)
        clip = metadata.get("action_clip")
        self.action_clip = None if clip is None else float(clip)
        target_clip = metadata.get("action_target_clip")
        self.target_clip = None if target_clip is None else np.asarray(target_clip, dtype=np.float64)
        self.target_filter = TargetFilter(metadata.get("action_target_filter_alpha", 1.0))
        self.last_action = np.zeros(len(bundle.joint_names), dtype=np.float32)
        self.previous_action = np.zeros_like(self.last_action)
        #: The last :meth:`act`'s observation and its action as the graph returned it (``None`` before the first).
        self.last_observation: np.ndarray | None = None
        self.last_raw_action: np.ndarray | None = None

    def reset(self) -> None:
        """Start of an episode: no last (or previous) action, the gait and the clock (if any) at their start."""
        self.last_action[:] = 0.0
        self.previous_action[:] = 0.0
        self.target_filter.reset()
        if self.composer is not None:
            self.composer.reset()
        if self.clock is not None:
            self.clock.reset()

    def act(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """The raw action for sensed ``values`` (by observation function name), clipped; stores it."""
        own = {"last_action": self.last_action, "previous_action": self.previous_action}
        obs = self.observation.build({**values, **own}).reshape(1, -1)
        if self.clock is not None:
            self.clock.advance()
        action = self.session.run(["actions"], {"obs": obs})[0].reshape(-1).astype(np.float32)
        self.last_observation, self.last_raw_action = obs.reshape(-1), action.copy()
        if not np.isfinite(action).all():
            action = np.zeros_like(action)
        if self.action_clip is not None:
            action = np.clip(action, -self.action_clip, self.action_clip)
        self.previous_action, self.last_action = self.last_action, action
        return action

    def joint_targets(self, action: np.ndarray, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """``q*`` (rad, policy order) for ``action`` (the residual gait reads the same sensed ``values``)."""
        if self.composer is not None:
            return self.composer.joint_targets(
                action,
                values["generated_commands"],
                values["projected_gravity"],
                values["base_ang_vel"],
                values["base_lin_vel"],
            ).astype(np.float64)
        target = self.action_offset + self.action_scale * np.asarray(action, dtype=np.float64)
        if self.target_clip is not None:
            target = np.clip(target, self.target_clip[:, 0], self.target_clip[:, 1])
        return self.target_filter(target)

    def step(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """One control tick: ``q*`` (rad, policy order)."""
        return self.joint_targets(self.act(values), values)

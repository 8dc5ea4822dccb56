"""The Limit's deploy configuration, ``deploy.json``: joints, gains, observation layout, wire conventions."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from linkage_lab.deploy.gait_clock import CLOCK_FUNCTION, clock_frequency
from linkage_lab.io import write_json_atomic
from linkage_lab.linkage_constants import PARALLELOGRAM_LEG_JACOBIAN
from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_NAMES, JOINT_TABLE

WireAngles = Literal["motor", "joint"]
LegGains = Literal["coupled", "diagonal"]

#: The leg gains an export gives the Limit's drivers (see :data:`WIRE_DOC`), and so what its training's drive applies
#: (``articulation.leg_actuator_cfg``): one setting, so that the policy trains on the drivers it will run on.
LEG_GAINS: LegGains = "diagonal"
#: The drive's ``motor_coupling`` that models each wire setting.
MOTOR_COUPLING: dict[str, str] = {"coupled": "held", "diagonal": "diagonal"}

DEPLOY_FORMAT = "linkage_lab/limit_deploy"
DEPLOY_VERSION = 1
DEPLOY_FILENAME = "deploy.json"
NUM_JOINTS = len(JOINT_IDS)
#: The parallelogram leg, ``q^p = J q^s`` per leg on (hip, knee) (docs/design/robots.md §1.3).
HIP_KNEE_JACOBIAN = PARALLELOGRAM_LEG_JACOBIAN
#: Observation terms the deployment can build, with their sizes; aliases are Isaac Lab's term functions.
OBSERVATION_SIZES = {
    "base_lin_vel": 3,
    "base_ang_vel": 3,
    "projected_gravity": 3,
    "velocity_commands": 3,
    "joint_pos": NUM_JOINTS,
    "joint_vel": NUM_JOINTS,
    "actions": NUM_JOINTS,
    # The raw action before the last (tasks/velocity/history.py): the second of two targets in flight when the
    # loop's latency reaches two control periods.
    "previous_action": NUM_JOINTS,
    # A gait clock's (sin, cos) from the policy's own tick count (deploy/gait_clock.py); the term records its frequency.
    CLOCK_FUNCTION: 2,
}
OBSERVATION_ALIASES = {
    "generated_commands": "velocity_commands",
    "joint_pos_rel": "joint_pos",
    "joint_vel_rel": "joint_vel",
    "last_action": "actions",
}

WIRE_DOC = """\
Wire angles. The Limit's hip and knee motors sit co-axially at the hip; the knee motor drives the
shank through a parallelogram, so its encoder measures the shank's absolute angle:
q^p = J q^s per leg, J = [[1, 0], [1, 1]] on (hip, knee); the ankle motor is serial.

wire_angles = "motor" (default): a record's pos/vel/tq for a knee id are the knee MOTOR's
(what its encoder measures, hip + knee), as docs/design/robots.md §1.4 reads ("actual angle ... per joint
id"). Decoding: q_knee = θ_knee_motor − θ_hip, q̇ likewise, τ^s = Jᵀ τ^p. Encoding: θ* = J q*.
max_tq is the motor's own clamp (the simulator's per-motor peak torque, same numbers).
wire_angles = "joint": firmware converts, the wire carries serial joint values unchanged.

Gains. The policy's joint gains K_j map to motor space as K_m = J⁻ᵀ K_j J⁻¹, i.e. per leg
[[k_h + k_k, −k_k], [−k_k, k_k]]: it couples hip and knee, and a per-motor driver only takes
the diagonal. Two ways to give it to the drivers (LEG_GAINS picks the export's, and training's
drive models the same one, so a policy trains on the drivers it runs on):
leg_gains = "coupled": each motor gets kp = K_m,ii (its exact stiffness against its own angle)
and the coupling terms are folded into its target from the latest sample, pos_i = θ*_i +
Σ_j≠i K_m,ij (θ*_j − θ_j) / K_m,ii (damping likewise into vel), so the torque at the sample
instant is exactly J⁻ᵀ (K_j e + D_j ė), and the cross terms stay as they were sampled for the
whole control period while the other motor moves. leg_gains = "diagonal": kp = K_m,ii alone,
no fold-in: the joint stiffness is Jᵀ diag(K_m) J = [[k_h + 2k_k, k_k], [k_k, k_k]] instead of
diag(k_h, k_k), the same at every instant. Copying joint kp/kd to the motors is never done.
(docs/results/2026-12-06_held_coupling.md compares the two.)

Encoder table. Per id, model angle = sign × (wire − offset_rad), rates and torques × sign;
identity by default. offset_rad is the wire reading at the model's zero pose (docs/design/robots.md §1.2).
"""


@dataclass(frozen=True)
class ObservationTerm:
    """One term of the policy observation, in order.

    Attributes:
        name: Term name (a key of :data:`OBSERVATION_SIZES` or an alias).
        size: Number of values.
        scale: Multiplier, scalar or one per value.
        clip: ``(low, high)`` applied after scaling; ``None`` = no clip.
        frequency_hz: A gait clock's frequency (Hz); ``None`` for every other term.
    """

    name: str
    size: int
    scale: float | tuple[float, ...] = 1.0
    clip: tuple[float, float] | None = None
    frequency_hz: float | None = None

    @property
    def source(self) -> str:
        """The canonical term this one reads."""
        return OBSERVATION_ALIASES.get(self.name, self.name)


@dataclass(frozen=True)
class LimitDeployConfig:
    """Everything the robot needs besides the policy file; ``deploy.json`` (see :func:`write_deploy_config`).

    Per-joint tuples have 12 entries in canonical id order.

    Attributes:
        task: Task id the policy was trained on.
        control_period_s: Policy period (s).
        default_joint_pos: Default joint angles ``q_0`` (rad); observations are relative to it.
        action_scale: Action scale (rad per unit action).
        action_offset: Joint target at zero action (rad): ``q* = action_offset + action_scale · a``
            (Isaac Lab's ``use_default_offset`` makes it ``default_joint_pos``).
        kp: Joint stiffness ``K_j`` (N·m/rad).
        kd: Joint damping ``D_j`` (N·m·s/rad).
        max_torque_nm: Torque clamp per motor (N·m).
        observation: Observation terms in order.
        encoder_sign: ±1 per id (wire → model).
        encoder_offset_rad: Wire reading at the model's zero pose, per id (rad).
        wire_angles: ``"motor"`` or ``"joint"`` (see :data:`WIRE_DOC`).
        leg_gains: ``"coupled"`` or ``"diagonal"`` (see :data:`WIRE_DOC`).
        hip_knee_jacobian: ``J`` of each leg's (hip, knee) motors.
        action_clip: Symmetric clip of the policy's actions; ``None`` = no clip.
        target_clip_rad: ``(lowest, highest)`` joint target per joint (rad), as in training (Isaac Lab's clip of
            ``q*``); ``None`` = no clip.
        target_filter_alpha: ``α`` of the first-order smoothing of ``q*`` each tick
            (:class:`~linkage_lab.deploy.target_filter.TargetFilter`; 1 = none), as in training.
        policy_file: Policy file name next to ``deploy.json``.
        export: Further export metadata, kept as written.
    """

    task: str
    control_period_s: float
    default_joint_pos: tuple[float, ...]
    action_scale: tuple[float, ...]
    action_offset: tuple[float, ...]
    kp: tuple[float, ...]
    kd: tuple[float, ...]
    max_torque_nm: tuple[float, ...]
    observation: tuple[ObservationTerm, ...]
    encoder_sign: tuple[float, ...] = (1.0,) * NUM_JOINTS
    encoder_offset_rad: tuple[float, ...] = (0.0,) * NUM_JOINTS
    wire_angles: WireAngles = "motor"
    leg_gains: LegGains = LEG_GAINS
    hip_knee_jacobian: tuple[tuple[float, float], tuple[float, float]] = HIP_KNEE_JACOBIAN
    action_clip: float | None = None
    target_clip_rad: tuple[tuple[float, float], ...] | None = None
    target_filter_alpha: float = 1.0
    policy_file: str = "policy.onnx"
    export: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("default_joint_pos", "action_scale", "action_offset", "kp", "kd", "max_torque_nm"):
            _check_per_joint(name, getattr(self, name))
        _check_per_joint("encoder_offset_rad", self.encoder_offset_rad)
        bad_signs = [i for i, s in zip(JOINT_IDS, self.encoder_sign, strict=True) if s not in (1.0, -1.0)]
        if bad_signs:
            raise ValueError(f"encoder_sign must be +1 or -1; joint ids {bad_signs} are not")
        if self.wire_angles not in ("motor", "joint"):
            raise ValueError(f"wire_angles must be 'motor' or 'joint', got {self.wire_angles!r}")
        if self.leg_gains not in ("coupled", "diagonal"):
            raise ValueError(f"leg_gains must be 'coupled' or 'diagonal', got {self.leg_gains!r}")
        if not 0.0 < self.target_filter_alpha <= 1.0:
            raise ValueError(f"target_filter_alpha must be in (0, 1], got {self.target_filter_alpha}")
        if self.target_clip_rad is not None:
            _check_per_joint("target_clip_rad (lowest)", tuple(pair[0] for pair in self.target_clip_rad))
            _check_per_joint("target_clip_rad (highest)", tuple(pair[-1] for pair in self.target_clip_rad))
            empty = [i for i, (low, high) in zip(JOINT_IDS, self.target_clip_rad, strict=True) if not low <= high]
            if empty:
                raise ValueError(f"target_clip_rad must have lowest <= highest; joint ids {empty} do not")
        if not self.control_period_s > 0:
            raise ValueError(f"control_period_s must be positive, got {self.control_period_s}")
        for term in self.observation:
            if term.source not in OBSERVATION_SIZES:
                raise ValueError(f"unknown observation term {term.name!r}; known: {', '.join(OBSERVATION_SIZES)}")
            expected = OBSERVATION_SIZES[term.source]
            if term.size != expected:
                raise ValueError(f"observation term {term.name!r} has size {term.size}, expected {expected}")
            if (term.source == CLOCK_FUNCTION) != (term.frequency_hz is not None):
                raise ValueError(
                    f"observation term {term.name!r}: a frequency_hz belongs to the gait clock, and it needs one"
                )

    @property
    def observation_size(self) -> int:
        """Length of the policy's observation vector."""
        return sum(term.size for term in self.observation)

    def to_dict(self) -> dict[str, Any]:
        """The ``deploy.json`` document."""
        columns = {
            "default_pos_rad": self.default_joint_pos,
            "action_scale": self.action_scale,
            "action_offset_rad": self.action_offset,
            "kp": self.kp,
            "kd": self.kd,
            "max_torque_nm": self.max_torque_nm,
            "encoder_sign": self.encoder_sign,
            "encoder_offset_rad": self.encoder_offset_rad,
        }
        if self.target_clip_rad is not None:
            columns["target_min_rad"] = tuple(low for low, _ in self.target_clip_rad)
            columns["target_max_rad"] = tuple(high for _, high in self.target_clip_rad)
        joints = [
            {"id": entry.joint_id, "name": entry.name} | {key: values[i] for key, values in columns.items()}
            for i, entry in enumerate(JOINT_TABLE)
        ]
        observation = [
            {
                "name": t.name,
                "size": t.size,
                "scale": list(t.scale) if isinstance(t.scale, tuple) else t.scale,
            }
            | ({"clip": list(t.clip)} if t.clip is not None else {})
            | ({"params": {"frequency_hz": t.frequency_hz}} if t.frequency_hz is not None else {})
            for t in self.observation
        ]
        return {
            "format": DEPLOY_FORMAT,
            "version": DEPLOY_VERSION,
            "robot": "limit",
            "task": self.task,
            "control_period_s": self.control_period_s,
            "wire_angles": self.wire_angles,
            "leg_gains": self.leg_gains,
            "hip_knee_jacobian": [list(row) for row in self.hip_knee_jacobian],
            "policy": {
                "file": self.policy_file,
                "input": "obs",
                "output": "actions",
                "action_clip": self.action_clip,
                "target_filter_alpha": self.target_filter_alpha,
            },
            "joints": joints,
            "observation": observation,
            "notes": WIRE_DOC.splitlines(),
            "export": self.export,
        }

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> LimitDeployConfig:
        """Parse and check a ``deploy.json`` document (joints must be in canonical id order)."""
        if doc.get("format") != DEPLOY_FORMAT or doc.get("version") != DEPLOY_VERSION:
            raise ValueError(
                f"not a {DEPLOY_FORMAT} v{DEPLOY_VERSION} document: {doc.get('format')!r} v{doc.get('version')!r}"
            )
        joints = doc["joints"]
        rows = [(int(j["id"]), j["name"]) for j in joints]
        if rows != list(zip(JOINT_IDS, JOINT_NAMES, strict=True)):
            raise ValueError(f"deploy joints must be ids 1-12 in canonical order with canonical names, got {rows}")

        def column(key: str) -> tuple[float, ...]:
            return tuple(float(j[key]) for j in joints)

        policy = doc.get("policy", {})
        return cls(
            task=str(doc.get("task", "")),
            control_period_s=float(doc["control_period_s"]),
            default_joint_pos=column("default_pos_rad"),
            action_scale=column("action_scale"),
            action_offset=column("action_offset_rad"),
            kp=column("kp"),
            kd=column("kd"),
            max_torque_nm=column("max_torque_nm"),
            observation=tuple(_observation_term(t) for t in doc["observation"]),
            encoder_sign=column("encoder_sign"),
            encoder_offset_rad=column("encoder_offset_rad"),
            wire_angles=doc.get("wire_angles", "motor"),
            leg_gains=doc.get("leg_gains", "coupled"),
            hip_knee_jacobian=tuple(
                tuple(float(v) for v in row) for row in doc.get("hip_knee_jacobian", HIP_KNEE_JACOBIAN)
            ),
            action_clip=None if policy.get("action_clip") is None else float(policy["action_clip"]),
            target_clip_rad=tuple(zip(column("target_min_rad"), column("target_max_rad"), strict=True))
            if all("target_min_rad" in j and "target_max_rad" in j for j in joints)
            else None,
            target_filter_alpha=float(policy.get("target_filter_alpha", 1.0)),
            policy_file=str(policy.get("file", "policy.onnx")),
            export=dict(doc.get("export", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> LimitDeployConfig:
        """Read ``deploy.json`` (a file, or the folder holding it)."""
        path = Path(path)
        path = path / DEPLOY_FILENAME if path.is_dir() else path
        return cls.from_dict(json.loads(path.read_text()))


def _check_per_joint(name: str, values: tuple[float, ...]) -> None:
    if len(values) != NUM_JOINTS:
        raise ValueError(f"{name} needs {NUM_JOINTS} values (canonical id order), got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{name} has a non-finite value: {list(values)}")


def _observation_term(term: Mapping[str, Any]) -> ObservationTerm:
    # Isaac Lab's ObsTerm leaves ``scale`` (and ``clip``) at None when unused.
    scale = 1.0 if term.get("scale") is None else term["scale"]
    scale = float(scale) if np.ndim(scale) == 0 else tuple(float(v) for v in np.ravel(scale))
    if isinstance(scale, tuple) and len(scale) != int(term["size"]):
        raise ValueError(f"observation term {term['name']!r}: {len(scale)} scales for size {term['size']}")
    clip = term.get("clip")
    clip = None if clip is None else (float(clip[0]), float(clip[1]))
    # Only the clock's params are the robot's (another term's, e.g. the estimate's training error, are not).
    name = str(term["name"])
    frequency = clock_frequency(term) if OBSERVATION_ALIASES.get(name, name) == CLOCK_FUNCTION else None
    return ObservationTerm(name, int(term["size"]), scale, clip, frequency)


def _per_joint(metadata: Mapping[str, Any], key: str, default: Any = None) -> tuple[float, ...]:
    """A per-joint value of the export metadata: a scalar, 12 values in id order, or a dict keyed by
    joint name or by regular expression (as Isaac Lab configs write them; an exact name wins)."""
    value = metadata.get(key, default)
    if value is None:
        raise KeyError(f"export metadata lacks {key!r}")
    if isinstance(value, Mapping):
        values = []
        for name in JOINT_NAMES:
            matches = [v for k, v in value.items() if k == name] or [
                v for k, v in value.items() if re.fullmatch(k, name)
            ]
            if not matches:
                raise ValueError(f"{key}: no entry for joint {name!r} in {dict(value)}")
            values.append(float(matches[0]))
        return tuple(values)
    if np.ndim(value) == 0:
        return (float(value),) * NUM_JOINTS
    values = tuple(float(v) for v in np.ravel(value))
    _check_per_joint(key, values)
    return values


def _robot_torque_limits() -> tuple[float, ...]:
    """Per-joint effort limits of ``configs/robots/limit.yaml`` (read at export time only)."""

    limits = limit_config().joint_limits
    return tuple(limits[entry.joint].effort_nm for entry in JOINT_TABLE)


_KNOWN_KEYS = {
    "task", "control_period_s", "joint_names", "joint_ids", "default_joint_pos", "action_scale",
    "action_offset", "kp", "kd", "max_torque_nm", "observation_layout", "encoder_sign",
    "encoder_offset_rad", "wire_angles", "leg_gains", "action_clip", "policy_file", "action_target_filter_alpha",
    "action_target_clip",
}  # fmt: skip


def write_deploy_config(out_dir: Path, metadata: dict) -> Path:
    """Write ``deploy.json`` for the Limit from an export's metadata; checks it by reading it back.

    Per-joint values may be a scalar, 12 values in canonical id order, or ``{joint_name: value}``.

    Args:
        out_dir: Export folder (created if missing).
        metadata: Keys ``task``, ``control_period_s`` (s), ``joint_names`` and ``joint_ids`` (must be
            the canonical order; default: it), ``default_joint_pos`` (rad), ``action_scale``,
            ``action_offset`` (rad; Isaac Lab's offset, ``q* = offset + scale · a``; default:
            ``default_joint_pos``), ``kp`` (N·m/rad), ``kd`` (N·m·s/rad), ``max_torque_nm`` (N·m;
            default: the robot config's effort limits), ``observation_layout`` (list of
            ``{"name", "size", "scale"[, "clip"]}`` in order); optional ``encoder_sign``,
            ``encoder_offset_rad`` (identity), ``wire_angles`` (``"motor"``), ``leg_gains``
            (``"coupled"``), ``action_clip`` (``None``), ``action_target_clip`` (``[low, high]`` rad per joint, or
            ``None``), ``action_target_filter_alpha`` (1: none), ``policy_file`` (``"policy.onnx"``).
            Other JSON-serialisable keys are kept under ``"export"``.

    Returns:
        The path of ``deploy.json``.

    Raises:
        KeyError: A required key is missing.
        ValueError: Joint order not canonical, wrong sizes, or an unknown setting or term.
    """
    names = tuple(metadata.get("joint_names", JOINT_NAMES))
    ids = tuple(int(i) for i in metadata.get("joint_ids", JOINT_IDS))
    if names != JOINT_NAMES or ids != JOINT_IDS:
        raise ValueError(
            f"joint order must be the canonical table (ids 1-12: {', '.join(JOINT_NAMES)}); got names "
            f"{list(names)} and ids {list(ids)}"
        )
    default_pos = _per_joint(metadata, "default_joint_pos")
    extra = {}
    for key, value in metadata.items():
        if key in _KNOWN_KEYS:
            continue
        try:
            json.dumps(value)
        except TypeError:
            continue
        extra[key] = value
    config = LimitDeployConfig(
        task=str(metadata.get("task", "")),
        control_period_s=float(metadata["control_period_s"]),
        default_joint_pos=default_pos,
        action_scale=_per_joint(metadata, "action_scale"),
        action_offset=_per_joint(metadata, "action_offset", default_pos),
        kp=_per_joint(metadata, "kp"),
        kd=_per_joint(metadata, "kd"),
        max_torque_nm=_per_joint(metadata, "max_torque_nm")
        if metadata.get("max_torque_nm") is not None
        else _robot_torque_limits(),
        observation=tuple(_observation_term(t) for t in metadata["observation_layout"]),
        encoder_sign=_per_joint(metadata, "encoder_sign", 1.0),
        encoder_offset_rad=_per_joint(metadata, "encoder_offset_rad", 0.0),
        wire_angles=metadata.get("wire_angles", "motor"),
        leg_gains=metadata.get("leg_gains", LEG_GAINS),
        action_clip=None if metadata.get("action_clip") is None else float(metadata["action_clip"]),
        target_clip_rad=None
        if metadata.get("action_target_clip") is None
        else tuple((float(low), float(high)) for low, high in metadata["action_target_clip"]),
        target_filter_alpha=float(metadata.get("action_target_filter_alpha", 1.0)),
        policy_file=str(metadata.get("policy_file", "policy.onnx")),
        export=extra,
    )
    doc = config.to_dict()
    LimitDeployConfig.from_dict(json.loads(json.dumps(doc)))
    return write_json_atomic(Path(out_dir) / DEPLOY_FILENAME, doc)

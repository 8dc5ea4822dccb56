"""The base-velocity estimate a robot can compute: IMU + leg kinematics + foot contact (numpy).

No robot carries a velocity sensor. Legged robots estimate the base velocity by fusing the IMU's
accelerometer (integrated: smooth but drifting) with leg odometry (a planted foot does not move, so
the base moves opposite to the foot's velocity relative to the base: unbiased but noisy, and wrong for
a swinging or slipping foot). :class:`BaseVelocityEstimator` is the linear Kalman filter that does
this on the world-frame velocity ``v``:

* predict: ``v ← v + (R f + g) Δt``, ``P ← P + σ_a² Δt I`` with ``f`` the accelerometer's specific
  force in the base frame, ``R`` the IMU's orientation (base → world) and ``g = (0, 0, −9.81)``;
* update, for each foot within ``contact_band_m`` of the lowest foot (in the gravity frame):
  ``z = −R (J_foot q̇ + ω × p_foot)`` with ``p_foot`` the foot point in the base frame from the joint
  angles and ``J_foot q̇`` its velocity relative to the base; measurement covariance ``σ_f² I``.
  A flat sole rolls over its toe or heel for much of its stance, so its centre moves while that edge
  stays put: a foot with contact points (the sole's corners) is measured at the lowest of them. A leg that
  swings close to the floor is within the band too; given the joint torques, a foot also needs the ground
  force its leg's torques imply, ``F = −(J_footᵀ)⁺ τ``, to push up by ``stance_force_n`` (or, while no foot
  does, by ``standing_force_n`` with the feet together holding ``stance_force_n``: standing, the feet share the
  weight);
  a foot whose innovation fails the χ² gate (swing, slip) is left out. With ``gate_fallback`` the best foot is
  used when every foot fails; without it none is, and the estimate cannot drift away for good either: with no
  measurement its covariance grows by ``σ_a² Δt`` per step, which widens the gate until a planted foot passes it;
* with ``settle_updates`` n, a foot counts only from its (n+1)-th update in a row planted (the rules above but
  the gate): a landing foot is often still moving (it skids or bounces while it loads),
  and a trot with short stances would feed that skid into every step's estimate. Before the first measurement
  after a reset every planted foot counts.

The predict step takes ``f`` as the IMU's mean specific force over the update's ``Δt`` (its velocity increment
divided by ``Δt``), not one sample: at a 50 Hz update a single sample of a foot's landing impact would stand for
the whole period.

The leg chains are data (:class:`LegChain`: joint origins and axes from the robot's description, the
foot's sole point), so the same filter runs any robot; the robot's package says which links are feet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.description.model import RobotModel
from linkage_lab.io import write_json_atomic
from linkage_lab.kinematics.rotation import axis_rotation

#: The estimator's file in an exported bundle: its leg chains and noise model (:func:`write_estimator`).
ESTIMATOR_FILE = "base_velocity.json"
ESTIMATOR_FORMAT = "linkage_lab/base_velocity"
#: Gravity in the world frame (m/s², +z up).
GRAVITY_W = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class ChainJoint:
    """One joint of a leg chain (URDF semantics with ``rpy = 0``).

    Attributes:
        index: The joint's index in the joint vector the estimator is given (``-1``: a fixed joint).
        origin_m: The joint frame's origin in its parent frame (m).
        axis: Its unit rotation axis in its own frame.
    """

    index: int
    origin_m: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 1.0, 0.0)


@dataclass(frozen=True)
class LegChain:
    """The joints from the base to one foot, and the foot's contact point.

    Attributes:
        name: The foot's name (for reports).
        joints: Base to foot, in order.
        sole_point_m: The contact point in the last joint's frame (m): a point foot's, or a flat sole's centre.
        contact_points_m: Points in the last joint's frame a flat sole can pivot about (its corners, m); the
            lowest of them in the gravity frame is the planted point. Empty: ``sole_point_m`` always.
    """

    name: str
    joints: tuple[ChainJoint, ...]
    sole_point_m: tuple[float, float, float]
    contact_points_m: tuple[tuple[float, float, float], ...] = ()

    def foot_point(
        self, joint_pos: np.ndarray, joint_vel: np.ndarray, down_b: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The foot's planted point ``p`` in the base frame (m) and its velocity relative to the base ``J q̇`` (m/s).

        ``J q̇ = Σ_j (a_j × (p − o_j)) q̇_j`` over the revolute joints, with ``o_j`` and ``a_j`` the
        joint's origin and axis in the base frame. ``p`` is :attr:`sole_point_m`, or with ``down_b`` (gravity's
        direction in the base frame) and contact points, the contact point furthest along it.
        """
        rotation = np.eye(3)
        position = np.zeros(3)
        origins, axes, rates = [], [], []
        for joint in self.joints:
            position = position + rotation @ np.asarray(joint.origin_m, dtype=float)
            if joint.index >= 0:
                axis = np.asarray(joint.axis, dtype=float)
                origins.append(position)
                axes.append(rotation @ axis)
                rates.append(float(joint_vel[joint.index]))
                rotation = rotation @ axis_rotation(axis, float(joint_pos[joint.index]))
        point = position + rotation @ np.asarray(self.sole_point_m, dtype=float)
        if down_b is not None and self.contact_points_m:
            corners = position + np.asarray(self.contact_points_m, dtype=float) @ rotation.T
            point = corners[int(np.argmax(corners @ np.asarray(down_b, dtype=float)))]
        velocity = np.zeros(3)
        for origin, axis, rate in zip(origins, axes, rates, strict=True):
            velocity += np.cross(axis, point - origin) * rate
        return point, velocity

    def ground_force(self, joint_pos: np.ndarray, joint_torque: np.ndarray, down_b: np.ndarray) -> np.ndarray:
        """The force on the foot's planted point (base frame, N) that the leg's joint torques hold, for a massless leg
        at rest: ``Jᵀ F = −τ`` solved in least squares (``J`` the point's Jacobian over the chain's joints)."""
        indices = [joint.index for joint in self.joints if joint.index >= 0]
        jacobian = np.zeros((3, len(indices)))
        for column, index in enumerate(indices):
            unit = np.zeros(len(joint_torque))
            unit[index] = 1.0
            jacobian[:, column] = self.foot_point(joint_pos, unit, down_b)[1]
        torque = np.asarray(joint_torque, dtype=float)[indices]
        return np.linalg.lstsq(jacobian.T, -torque, rcond=None)[0]


@dataclass(frozen=True)
class EstimatorCfg:
    """Noise model and contact rule of :class:`BaseVelocityEstimator`.

    Attributes:
        accel_noise_mps2: Accelerometer noise density as a random walk on the velocity (m/s² per √(1/s)):
            what the prediction's covariance grows by, ``σ_a² Δt`` per step.
        foot_noise_mps: Standard deviation of one planted foot's velocity measurement (m/s): encoder
            noise through the leg Jacobian plus the foot's roll and small slips.
        contact_band_m: A foot this close to the lowest foot (height in the gravity frame, m) counts as
            planted; the χ² gate then removes the ones that move.
        gate_chi2: The innovation gate ``yᵀ S⁻¹ y`` above which a foot's measurement is left out (3 degrees
            of freedom: 11.34 passes 99 % of the measurements of a truly planted foot).
        stance_force_n: With the joint torques given, a foot in the band also needs its leg's torques to imply an
            upward ground force of at least this much (N); 0: the height band alone.
        standing_force_n: With the stance test on, when no foot in the band holds ``stance_force_n``, the feet in the
            band holding at least this much (N) count instead if together they hold ``stance_force_n``: a robot
            standing on all its feet shares its weight among them, so each may hold less than a trotting foot does,
            while legs swinging through a flight phase together hold little; 0: none then.
        use_accelerometer: ``False``: leg odometry alone (the prediction keeps ``v``; for comparisons).
        settle_updates: A foot's leg odometry counts fully only once the foot has been planted (band and stance test)
            this many updates in a row before (0: from its first); before the first measurement after a reset, at once.
        settling_noise_scale: Until then a foot's measurement counts with its noise (``foot_noise_mps``) this many
            times larger: a landing foot still skids, so what it implies is trusted less, not thrown away. ``None``:
            it is left out.
        gate_fallback: When every candidate foot fails the gate, use the one closest to the estimate anyway (the
            filter's first rule, kept as the default so bundles written before this setting run as they did).
            ``False``: use none. A leg whose joint torques read as load while it swings (a PD's response to a new
            target, sampled a few ms after it) is often the only candidate, and the fallback feeds its swing
            velocity into the estimate; without it, the covariance grows until a planted foot passes the gate.
    """

    accel_noise_mps2: float = 0.5
    foot_noise_mps: float = 0.08
    contact_band_m: float = 0.015
    gate_chi2: float = 11.34
    stance_force_n: float = 0.0
    standing_force_n: float = 0.0
    use_accelerometer: bool = True
    settle_updates: int = 0
    settling_noise_scale: float | None = None
    gate_fallback: bool = True


@dataclass
class EstimatorState:
    """What :meth:`BaseVelocityEstimator.update` keeps between calls; ``planted_updates``: per foot, the updates in a
    row it has been planted (empty before the first update); ``measured``: whether a foot has been measured since the
    last reset."""

    velocity_w: np.ndarray = field(default_factory=lambda: np.zeros(3))
    covariance: np.ndarray = field(default_factory=lambda: np.eye(3))
    feet_used: int = 0
    planted_updates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    measured: bool = False


class BaseVelocityEstimator:
    """Kalman filter of the base's world velocity from the IMU and the legs (module docstring).

    Args:
        chains: One :class:`LegChain` per foot.
        cfg: Noise model and contact rule.

    Raises:
        ValueError: No chain, or a non-positive noise.
    """

    def __init__(self, chains: Sequence[LegChain], cfg: EstimatorCfg | None = None):
        self.chains = tuple(chains)
        self.cfg = EstimatorCfg() if cfg is None else cfg
        if not self.chains:
            raise ValueError("a base-velocity estimator needs at least one leg chain")
        if not (self.cfg.accel_noise_mps2 > 0 and self.cfg.foot_noise_mps > 0 and self.cfg.gate_chi2 > 0):
            raise ValueError(f"estimator noises and gate must be positive, got {self.cfg}")
        if int(self.cfg.settle_updates) != self.cfg.settle_updates or self.cfg.settle_updates < 0:
            raise ValueError(f"settle_updates must be a whole number >= 0, got {self.cfg.settle_updates!r}")
        scale = self.cfg.settling_noise_scale
        if scale is not None and not (math.isfinite(scale) and scale >= 1.0):
            raise ValueError(f"settling_noise_scale must be finite and at least 1 (None: left out), got {scale!r}")
        self.state = EstimatorState()

    def reset(self, velocity_w: Sequence[float] | None = None, sigma_mps: float = 1.0) -> None:
        """Start again at ``velocity_w`` (``None``: at rest) with a standard deviation of ``sigma_mps``."""
        start = np.zeros(3) if velocity_w is None else np.asarray(velocity_w, dtype=float)
        self.state = EstimatorState(start.copy(), np.eye(3) * sigma_mps**2)

    def update(
        self,
        dt_s: float,
        joint_pos: np.ndarray,
        joint_vel: np.ndarray,
        gyro_b: np.ndarray,
        accelerometer_b: np.ndarray,
        rotation_wb: np.ndarray,
        joint_torque: np.ndarray | None = None,
    ) -> np.ndarray:
        """One predict + update; returns the base velocity in the base frame (m/s).

        Args:
            dt_s: Time since the last call (s).
            joint_pos: Joint angles (rad), indexed as the chains' joints say.
            joint_vel: Joint rates (rad/s), same indexing.
            gyro_b: IMU angular velocity in the base frame (rad/s).
            accelerometer_b: IMU specific force in the base frame (m/s², +9.81 up at rest), its mean over ``dt_s``.
            rotation_wb: IMU orientation as a rotation matrix, base → world.
            joint_torque: Joint torques (N·m), same indexing, for the stance test (``cfg.stance_force_n``);
                ``None``: the height band alone.

        Raises:
            ValueError: A non-finite input (the state is kept as it was).
        """
        inputs = (joint_pos, joint_vel, gyro_b, accelerometer_b, rotation_wb)
        inputs += () if joint_torque is None else (joint_torque,)
        if not np.isfinite(dt_s) or dt_s < 0 or not all(np.all(np.isfinite(x)) for x in inputs):
            raise ValueError("base-velocity estimator: non-finite input, update skipped")
        cfg, state = self.cfg, self.state
        rotation = np.asarray(rotation_wb, dtype=float)
        velocity, covariance = state.velocity_w.copy(), state.covariance.copy()
        if cfg.use_accelerometer:
            velocity += (rotation @ np.asarray(accelerometer_b, dtype=float) + GRAVITY_W) * dt_s
        covariance += np.eye(3) * cfg.accel_noise_mps2**2 * dt_s
        measurements, planted = self._foot_measurements(
            joint_pos, joint_vel, np.asarray(gyro_b, dtype=float), rotation, joint_torque
        )
        streak = state.planted_updates if len(state.planted_updates) == len(planted) else np.zeros(len(planted), int)
        streak = np.where(planted, streak + 1, 0)
        # Until a foot has been measured the estimate knows nothing (it starts at rest, σ ~ 1 m/s): any planted foot
        # is better than none, so the settling waits for the first measurement.
        settle = cfg.settle_updates if state.measured else 0
        settled_noise = np.eye(3) * cfg.foot_noise_mps**2
        settling = cfg.settling_noise_scale
        candidates = [
            (z, settled_noise if n > settle else settled_noise * settling**2)
            for z, n in zip(measurements, streak[planted], strict=True)
            if n > settle or settling is not None
        ]
        scored = []
        for z, noise in candidates:
            innovation = z - velocity
            distance = float(innovation @ np.linalg.solve(covariance + noise, innovation))
            scored.append((distance, z, noise))
        accepted = [(z, noise) for d, z, noise in scored if d <= cfg.gate_chi2]
        if not accepted and scored and cfg.gate_fallback:
            best = min(scored, key=lambda item: item[0])
            accepted = [(best[1], best[2])]
        for z, noise in accepted:
            gain = covariance @ np.linalg.inv(covariance + noise)
            velocity = velocity + gain @ (z - velocity)
            covariance = (np.eye(3) - gain) @ covariance
        self.state = EstimatorState(
            velocity, 0.5 * (covariance + covariance.T), len(accepted), streak, state.measured or bool(accepted)
        )
        return rotation.T @ velocity

    def _foot_measurements(
        self,
        joint_pos: np.ndarray,
        joint_vel: np.ndarray,
        gyro_b: np.ndarray,
        rotation: np.ndarray,
        joint_torque: np.ndarray | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """World-frame base velocities implied by each foot low enough (and, given torques, loaded enough) to be
        planted, and which feet those are (bool per chain)."""
        down_b = rotation.T @ np.array([0.0, 0.0, -1.0])
        feet = [chain.foot_point(joint_pos, joint_vel, down_b) for chain in self.chains]
        heights = np.array([(rotation @ point)[2] for point, _ in feet])
        low = heights <= heights.min() + self.cfg.contact_band_m
        if joint_torque is not None and self.cfg.stance_force_n > 0:
            upward = np.array(
                [
                    (rotation @ chain.ground_force(joint_pos, joint_torque, down_b))[2] if low[k] else 0.0  # world z, N
                    for k, chain in enumerate(self.chains)
                ]
            )
            stance = low & (upward >= self.cfg.stance_force_n)
            if not stance.any() and self.cfg.standing_force_n > 0:
                shared = low & (upward >= self.cfg.standing_force_n)
                if upward[shared].sum() >= self.cfg.stance_force_n:
                    stance = shared
            low = stance
        implied = [-rotation @ (rel + np.cross(gyro_b, point)) for (point, rel), planted in zip(feet, low) if planted]
        return implied, low


def estimator_document(estimator: BaseVelocityEstimator, joint_names: Sequence[str]) -> dict[str, Any]:
    """The estimator as JSON-ready data: the joint order its chains index, the chains, the noise model."""
    return {
        "format": ESTIMATOR_FORMAT,
        "version": 1,
        "joint_names": list(joint_names),
        "cfg": asdict(estimator.cfg),
        "chains": [
            {
                "name": chain.name,
                "sole_point_m": list(chain.sole_point_m),
                "contact_points_m": [list(point) for point in chain.contact_points_m],
                "joints": [
                    {"index": j.index, "origin_m": list(j.origin_m), "axis": list(j.axis)} for j in chain.joints
                ],
            }
            for chain in estimator.chains
        ],
    }


def estimator_from_document(document: dict[str, Any]) -> tuple[BaseVelocityEstimator, list[str]]:
    """The estimator and its joint order back from :func:`estimator_document`'s data.

    Raises:
        ValueError: Not an estimator document, or a malformed one.
    """
    if not isinstance(document, dict) or document.get("format") != ESTIMATOR_FORMAT:
        raise ValueError(f"not a base-velocity estimator document (format {ESTIMATOR_FORMAT!r})")
    try:
        chains = [
            LegChain(
                str(chain["name"]),
                tuple(
                    ChainJoint(int(j["index"]), tuple(map(float, j["origin_m"])), tuple(map(float, j["axis"])))
                    for j in chain["joints"]
                ),
                tuple(map(float, chain["sole_point_m"])),
                tuple(tuple(map(float, point)) for point in chain.get("contact_points_m", ())),
            )
            for chain in document["chains"]
        ]
        return BaseVelocityEstimator(chains, EstimatorCfg(**document["cfg"])), [str(n) for n in document["joint_names"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed base-velocity estimator document: {exc!r}") from None


def write_estimator(out_dir: str | Path, estimator: BaseVelocityEstimator, joint_names: Sequence[str]) -> Path:
    """Write :data:`ESTIMATOR_FILE` into ``out_dir`` (atomically); returns its path."""

    return write_json_atomic(Path(out_dir) / ESTIMATOR_FILE, estimator_document(estimator, joint_names))


def load_estimator(path: str | Path) -> tuple[BaseVelocityEstimator, list[str]]:
    """Read an estimator file; returns the estimator and the joint order its chains index.

    Raises:
        ValueError: Unreadable, not JSON, or not an estimator document.
    """
    import json

    try:
        document = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the base-velocity estimator: {exc}") from None
    return estimator_from_document(document)


def leg_chains(
    model: RobotModel,
    feet: dict[str, tuple[str, tuple[float, float, float]]],
    joint_names: Sequence[str],
    contact_points: dict[str, Sequence[tuple[float, float, float]]] | None = None,
) -> list[LegChain]:
    """Leg chains from a serial-tree description.

    Args:
        model: The robot's description (its root link is the base).
        feet: Foot name → (its link, the sole point in that link's frame (m)).
        joint_names: The joint vector's order (what the estimator's ``joint_pos`` indexes); a revolute
            joint on a leg that is not in it is an error.
        contact_points: Foot name → the points its sole can pivot about, in the same frame (m); a foot not named
            is measured at its sole point.

    Raises:
        ValueError: A foot link the tree does not reach from the base, or a leg joint missing from
            ``joint_names``.
    """
    by_child = {joint.child: joint for joint in model.joints}
    roots = [link.name for link in model.links if link.name not in by_child]
    if len(roots) != 1:
        raise ValueError(f"{model.name}: expected one root link, found {roots}")
    index = {name: i for i, name in enumerate(joint_names)}
    chains = []
    for foot, (link, sole) in feet.items():
        path, current = [], link
        while current != roots[0]:
            if current not in by_child:
                raise ValueError(f"foot {foot!r}: link {current!r} is not connected to the base {roots[0]!r}")
            joint = by_child[current]
            if joint.kind == "revolute" and joint.name not in index:
                raise ValueError(f"foot {foot!r}: joint {joint.name!r} is not in the joint vector")
            joint_index = index[joint.name] if joint.kind == "revolute" else -1
            path.append(ChainJoint(joint_index, tuple(joint.origin_m), tuple(joint.axis)))
            current = joint.parent
        corners = tuple(tuple(map(float, point)) for point in (contact_points or {}).get(foot, ()))
        chains.append(LegChain(foot, tuple(reversed(path)), tuple(sole), corners))
    return chains

"""The quasi-static step-up pose: one foot on a stair step carries the whole robot (docs/design/robots.md §2.5).

World frame: origin at the stance ankle centre, +x forward (up the stairs), +y left, +z up. The
stance foot stands flat on the step; the trailing (swing) foot stands flat on the lower floor one
tread behind, touching it without load: the instant of a step-up when the weight has just left
the trailing foot. The pose follows from four rules, applied in order:

1. **Height.** The pelvis is as high as the trailing leg allows: its knee bent by
   ``swing_knee_rad`` (0 = straight), its ankle on the lower floor. The step height therefore
   sets the stance knee bend.
2. **Natural pose.** Torso upright, pelvis level and square to the stairs, centred between the
   two ankles; arms hanging plumb (elbows straight).
3. **Balance.** A quasi-static robot holds its centre of mass (COM) over its support foot. Where
   the natural COM lies outside the sole shrunk by ``com_margin_m``, the pelvis shifts (hip roll
   sideways, hip and knee forward) by the least amount that brings the COM onto that shrunk sole:
   the COM target is the point of the shrunk sole nearest the natural COM.
4. **Ankle range.** Moving the pelvis forward bends the stance ankle up (dorsiflexion). If the
   stance ankle would pass ``max_stance_ankle_pitch_rad``, the pelvis stops there and the torso
   leans forward (hip pitch) until the COM reaches its target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from linkage_lab.kinematics.leg_ik import LEG_AXES, LegReachError, leg_inverse_kinematics
from linkage_lab.kinematics.rotation import axis_rotation
from linkage_lab.statics.tree import Frame, KinematicTree

Side = Literal["left", "right"]
#: Residual tolerance of the pose solves (m for COM rows, rad for the ankle row).
_SOLVE_TOL = 1e-10
#: Largest Newton step on the pelvis coordinates (m, rad), so a solve never jumps out of reach.
_MAX_STEP = 0.05


class StepUpPoseError(ValueError):
    """The step-up pose cannot be built: a foot out of reach, or the balance solve failed."""


@dataclass(frozen=True)
class StepUpPoseCfg:
    """Parameters of the step-up pose.

    Attributes:
        step_height_m: Rise of the step: stance sole above the trailing sole (m).
        tread_m: Horizontal distance the trailing ankle stands behind the stance ankle (m): one stair
            tread (28 cm: the usual rise–tread rule 2 R + G ≈ 63 cm for an 18 cm rise).
        stance_width_m: Lateral distance between the two ankle centres (m); ``None`` means twice the
            hip offset (each foot under its hip).
        swing_clearance_m: Height of the trailing foot above the lower floor (m); 0 = touching.
        swing_knee_rad: Knee bend of the trailing leg (rad); 0 = straight, the highest pelvis.
        com_margin_m: Distance the COM must keep inside every edge of the stance sole (m).
        max_stance_ankle_pitch_rad: Largest stance ankle dorsiflexion (rad, + = toes up); ``None``
            means the joint's upper limit.
        stance_side: ``"left"`` or ``"right"``: the leg on the step.
    """

    step_height_m: float = 0.18
    tread_m: float = 0.28
    stance_width_m: float | None = None
    swing_clearance_m: float = 0.0
    swing_knee_rad: float = 0.0
    com_margin_m: float = 0.02
    max_stance_ankle_pitch_rad: float | None = None
    stance_side: Side = "left"

    def __post_init__(self) -> None:
        if self.stance_side not in ("left", "right"):
            raise ValueError(f"stance_side must be 'left' or 'right', got {self.stance_side!r}")
        for name in ("step_height_m", "tread_m", "swing_clearance_m", "com_margin_m"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.stance_width_m is not None and not self.stance_width_m >= 0.0:
            raise ValueError(f"stance_width_m must be >= 0, got {self.stance_width_m}")


@dataclass(frozen=True)
class StepUpPose:
    """A solved step-up pose (world frame at the stance ankle centre, see the module docstring).

    Attributes:
        cfg: The parameters.
        joint_pos: Angle of every revolute joint (rad).
        pelvis_position_m: Pelvis frame origin (the hip line's midpoint) (m).
        torso_lean_rad: Forward pitch of the pelvis and torso (rad); 0 = upright.
        frames: World frame of every link.
        com_m: Whole-body COM (m).
        natural_com_m: Whole-body COM of the natural pose, before balancing (m).
        com_target_m: ``(x, y)`` the balance rule asks of the COM (m).
        sole_m: Stance sole extent ``((x_min, x_max), (y_min, y_max))`` about the ankle (m).
        swing_ankle_m: Trailing ankle centre (m).
        ankle_pitch_limited: Whether rule 4 applied (the stance ankle sits at its cap).
        limit_violations: Joints outside their ranges, as text; empty when all are inside.
    """

    cfg: StepUpPoseCfg
    joint_pos: dict[str, float]
    pelvis_position_m: np.ndarray
    torso_lean_rad: float
    frames: dict[str, Frame]
    com_m: np.ndarray
    natural_com_m: np.ndarray
    com_target_m: np.ndarray
    sole_m: tuple[tuple[float, float], tuple[float, float]]
    swing_ankle_m: np.ndarray
    ankle_pitch_limited: bool
    limit_violations: list[str]


def solve_step_up_pose(tree: KinematicTree, cfg: StepUpPoseCfg | None = None) -> StepUpPose:
    """Build the step-up pose of a humanoid with legs like Marvin's (``LEG_AXES``).

    Raises:
        StepUpPoseError: A foot cannot be reached or the balance cannot be met.
        ValueError: The model's legs do not have the expected joints.
    """
    return _StepUpSolver(tree, cfg or StepUpPoseCfg()).solve()


class _StepUpSolver:
    """Pose of the whole robot as a function of the pelvis coordinates ``(x, y, lean)``."""

    def __init__(self, tree: KinematicTree, cfg: StepUpPoseCfg) -> None:
        self.tree, self.cfg = tree, cfg
        self.stance = cfg.stance_side
        self.swing = "right" if self.stance == "left" else "left"
        for side in (self.stance, self.swing):
            for name, axis in LEG_AXES.items():
                joint = tree.joint_by_name.get(f"{side}_{name}")
                if joint is None or not np.allclose(joint.axis, axis):
                    raise ValueError(f"{side}_{name}: expected a revolute joint with axis {axis}")
        self.thigh_m = -float(tree.joint_by_name[f"{self.stance}_knee"].origin_m[2])
        self.shin_m = -float(tree.joint_by_name[f"{self.stance}_ankle_pitch"].origin_m[2])
        self.hip_offset_m = {
            side: np.asarray(tree.joint_by_name[f"{side}_hip_yaw"].origin_m, dtype=float)
            for side in (self.stance, self.swing)
        }
        width = cfg.stance_width_m
        if width is None:
            width = float(abs(self.hip_offset_m[self.stance][1] - self.hip_offset_m[self.swing][1]))
        inward = -1.0 if self.stance == "left" else 1.0
        self.swing_ankle_m = np.array([-cfg.tread_m, inward * width, -cfg.step_height_m + cfg.swing_clearance_m])
        thigh, shin = self.thigh_m, self.shin_m
        self.swing_reach_m = math.sqrt(thigh * thigh + shin * shin + 2.0 * thigh * shin * math.cos(cfg.swing_knee_rad))
        self.sole_m = _sole_extent(tree, f"{self.stance}_foot")
        upper = tree.joint_by_name[f"{self.stance}_ankle_pitch"].limit_rad[1]
        self.ankle_cap_rad = upper if cfg.max_stance_ankle_pitch_rad is None else cfg.max_stance_ankle_pitch_rad

    def pose(self, x: float, y: float, lean: float) -> tuple[dict[str, float], dict[str, Frame], np.ndarray]:
        """Joint angles, frames and pelvis position for pelvis ``(x, y)`` (m) and ``lean`` (rad)."""
        pelvis_rotation = axis_rotation((0.0, 1.0, 0.0), lean)
        swing_hip_offset = pelvis_rotation @ self.hip_offset_m[self.swing]
        dx, dy = (np.array([x, y]) + swing_hip_offset[:2]) - self.swing_ankle_m[:2]
        height_sq = self.swing_reach_m**2 - dx * dx - dy * dy
        if height_sq < 0.0:
            raise StepUpPoseError(
                f"the trailing foot ({self.cfg.tread_m:.3f} m behind, {abs(self.swing_ankle_m[1]):.3f} m "
                f"across) is out of the leg's reach from pelvis x={x:+.3f}, y={y:+.3f} m"
            )
        z = self.swing_ankle_m[2] + math.sqrt(height_sq) - swing_hip_offset[2]
        pelvis = np.array([x, y, z])
        feet = {self.stance: np.zeros(3), self.swing: self.swing_ankle_m}
        joint_pos = dict.fromkeys(self.tree.model.actuated_joint_names(), 0.0)  # elbows straight
        for side, ankle in feet.items():
            hip = pelvis + pelvis_rotation @ self.hip_offset_m[side]
            try:
                angles = leg_inverse_kinematics(hip, ankle, np.eye(3), pelvis_rotation, self.thigh_m, self.shin_m)
            except LegReachError as exc:
                raise StepUpPoseError(f"{side} foot: {exc}") from exc
            joint_pos.update(angles.joint_pos(side))
        for side in ("left", "right"):
            if f"{side}_shoulder_pitch" in self.tree.joint_by_name:
                joint_pos[f"{side}_shoulder_pitch"] = -lean  # arms hang plumb whatever the lean
        frames = self.tree.forward_kinematics(joint_pos, pelvis_rotation, pelvis)
        return joint_pos, frames, pelvis

    def com(self, x: float, y: float, lean: float) -> np.ndarray:
        """Whole-body COM (m) at pelvis ``(x, y, lean)``."""
        return self.tree.center_of_mass(self.pose(x, y, lean)[1])[1]

    def stance_ankle_pitch(self, x: float, y: float) -> float:
        """Stance ankle pitch (rad) at pelvis ``(x, y)``; it does not depend on the lean."""
        return self.pose(x, y, 0.0)[0][f"{self.stance}_ankle_pitch"]

    def solve(self) -> StepUpPose:
        natural = self.swing_ankle_m[:2] / 2.0  # pelvis centred between the ankles
        natural_com = self.com(*natural, 0.0)
        margin = self.cfg.com_margin_m
        (x_lo, x_hi), (y_lo, y_hi) = self.sole_m
        if x_hi - x_lo <= 2 * margin or y_hi - y_lo <= 2 * margin:
            raise StepUpPoseError(f"COM margin {margin} m leaves no room on the sole")
        target = np.clip(natural_com[:2], [x_lo + margin, y_lo + margin], [x_hi - margin, y_hi - margin])

        x, y = _newton(lambda v: self.com(v[0], v[1], 0.0)[:2] - target, natural, "balance the COM")
        lean, limited = 0.0, self.stance_ankle_pitch(x, y) > self.ankle_cap_rad + 1e-9
        if limited:
            x, y, lean = _newton(
                lambda v: np.array(
                    [
                        self.stance_ankle_pitch(v[0], v[1]) - self.ankle_cap_rad,
                        *(self.com(*v)[:2] - target),
                    ]
                ),
                np.array([x, y, 0.0]),
                "balance the COM with the stance ankle at its cap (torso lean)",
            )
        joint_pos, frames, pelvis = self.pose(x, y, lean)
        return StepUpPose(
            cfg=self.cfg,
            joint_pos=joint_pos,
            pelvis_position_m=pelvis,
            torso_lean_rad=float(lean),
            frames=frames,
            com_m=self.tree.center_of_mass(frames)[1],
            natural_com_m=natural_com,
            com_target_m=target,
            sole_m=self.sole_m,
            swing_ankle_m=self.swing_ankle_m,
            ankle_pitch_limited=bool(limited),
            limit_violations=_limit_violations(self.tree, joint_pos),
        )


def _sole_extent(tree: KinematicTree, foot_link: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((x_min, x_max), (y_min, y_max))`` of the foot's colliding box in its link frame (m)."""
    link = next(link for link in tree.model.links if link.name == foot_link)
    boxes = [s for s in link.solids if s.kind == "box" and s.collide]
    if len(boxes) != 1:
        raise ValueError(f"{foot_link}: expected one colliding box (the sole), found {len(boxes)}")
    centre, size = np.asarray(boxes[0].center_m), np.asarray(boxes[0].size_m)
    return (
        (float(centre[0] - size[0] / 2), float(centre[0] + size[0] / 2)),
        (float(centre[1] - size[1] / 2), float(centre[1] + size[1] / 2)),
    )


def _newton(residual, start: np.ndarray, what: str) -> np.ndarray:
    """Root of ``residual`` (square system) by Newton's method with a finite-difference Jacobian."""
    point = np.asarray(start, dtype=float).copy()
    step_fd = 1e-7
    for _ in range(60):
        value = residual(point)
        if np.max(np.abs(value)) < _SOLVE_TOL:
            return point
        jacobian = np.empty((value.size, point.size))
        for i in range(point.size):
            shifted = point.copy()
            shifted[i] += step_fd
            jacobian[:, i] = (residual(shifted) - value) / step_fd
        try:
            step = np.linalg.solve(jacobian, -value)
        except np.linalg.LinAlgError as exc:
            raise StepUpPoseError(f"could not {what}: singular Jacobian") from exc
        norm = float(np.linalg.norm(step))
        point += step * min(1.0, _MAX_STEP / norm) if norm > 0 else step
    raise StepUpPoseError(f"could not {what}: no convergence (residual {np.max(np.abs(value)):.2e})")


def _limit_violations(tree: KinematicTree, joint_pos: dict[str, float]) -> list[str]:
    """Joints outside their ranges, as text (degrees)."""
    out = []
    for name, value in joint_pos.items():
        lower, upper = tree.joint_by_name[name].limit_rad
        if not lower - 1e-9 <= value <= upper + 1e-9:
            out.append(
                f"{name} {math.degrees(value):+.1f}° outside {math.degrees(lower):+.1f}° … {math.degrees(upper):+.1f}°"
            )
    return out

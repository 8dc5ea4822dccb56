"""S3N in contact: a robot's leg with its foot pinned to the ground, serial + S3N vs the closed-chain oracle.

The fixed-base chirp (:mod:`linkage_lab_experiments.validation.standalone_leg`) is the swing phase. In stance the
foot is held by the ground and the leg carries the body: here the hip rides on a carriage that slides
freely in x and z (the body's share of the robot's mass, no pitch: the other legs hold that) and an
equality constraint pins the foot point to the ground, the limiting case of a non-slipping stance
foot. The leg then moves the body, so the inertia its joints see is far larger than the leg's own,
and the ``torque_predicted`` acceleration estimate (which divides each step's change of actuator
torque by the *free* leg's inertia ``M_norm``) over-predicts the acceleration jump; ``previous`` lags
by a step but makes no such assumption. Both rigs (serial and oracle) share the carriage, the pin,
the physics step and MuJoCo's flags, so the comparison isolates the leg model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.serial_leg import LegBody, leg_bodies_xml, mjcf_header
from linkage_lab.kinematics.transmission import PARALLELOGRAM_LEG_JACOBIAN, parallelogram_leg
from linkage_lab.robots.registry import get_robot
from linkage_lab_experiments.analysis import pick_robot
from linkage_lab_experiments.analysis.leg_run import LegRun, bare_drive_cfg, drive_loop, oracle_at_step
from linkage_lab_experiments.analysis.oracle import OracleCfg, ParallelogramOracle, loop_closure_xml, oracle_leg_xml

#: Serial → motor coordinates of the parallelogram leg, ``θ = J q``.
_J = np.asarray(PARALLELOGRAM_LEG_JACOBIAN, dtype=float)
#: The two phases a leg runs in.
PHASES = ("swing", "stance")


@dataclass(frozen=True)
class RigCfg:
    """The base and the foot of one leg.

    Attributes:
        phase: ``swing``: hip fixed in the air, foot free. ``stance``: hip on an (x, z) carriage of
            ``carriage_mass_kg``, foot pinned to the ground where it stands at the start.
        carriage_mass_kg: The body's share carried by the leg (kg).
        pin_time_constant_s: MuJoCo ``solref`` time constant of the foot pin (s); ``None``: twice the
            physics step, the stiffest the step resolves (as the oracle's loop closure).
    """

    phase: str = "stance"
    carriage_mass_kg: float = 4.0
    pin_time_constant_s: float | None = None

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r}; expected one of {PHASES}")
        if self.carriage_mass_kg <= 0.0:
            raise ValueError("carriage_mass_kg must be positive")


def stance_mass_kg(robot: str | None = None) -> float:
    """What one stance leg of ``robot`` carries in its gait (kg): its ``stance_mass_kg`` extra.

    Args:
        robot: ``None``: the only robot that provides it.
    """

    return float(get_robot(pick_robot("stance_mass_kg", robot)).extra("stance_mass_kg")())


def foot_point_m(body: LegBody, joint_pos: Sequence[float]) -> tuple[float, float]:
    """``(x, z)`` of the lower link's far end (the ankle point) relative to the hip (m)."""
    hip, knee = joint_pos
    x = -body.thigh_length_m * math.sin(hip) - body.shank_length_m * math.sin(hip + knee)
    z = -body.thigh_length_m * math.cos(hip) - body.shank_length_m * math.cos(hip + knee)
    return x, z


def rig_mjcf(name: str, body: LegBody, leg_xml: str, equality_xml: str, rig: RigCfg, dt: float, start) -> str:
    """A leg's MJCF on the rig: ``leg_xml`` under the carriage, plus the foot pin in stance."""
    x, z = foot_point_m(body, start)
    tau = rig.pin_time_constant_s or 2.0 * dt
    carriage = ""
    if rig.phase == "stance":
        inertia = 1e-3
        carriage = (
            '      <joint name="base_x" type="slide" axis="1 0 0"/>\n'
            '      <joint name="base_z" type="slide" axis="0 0 1"/>\n'
            f'      <inertial pos="0 0 0" mass="{rig.carriage_mass_kg!r}" '
            f'diaginertia="{inertia!r} {inertia!r} {inertia!r}"/>\n'
        )
        equality_xml += (
            f'    <connect site1="foot" site2="ground_pin" solref="{tau!r} 1.0" solimp="0.9999 0.9999 0.001"/>\n'
        )
    equality = f"  <equality>\n{equality_xml}  </equality>\n" if equality_xml else ""
    return (
        mjcf_header(name, dt, body.gravity_mps2)
        + "  <worldbody>\n"
        + f'    <site name="ground_pin" pos="{x!r} 0 {z!r}"/>\n'
        + '    <body name="carriage" pos="0 0 0">\n'
        + carriage
        + leg_xml
        + "    </body>\n"
        + "  </worldbody>\n"
        + equality
        + "</mujoco>\n"
    )


def _foot_site(body: LegBody) -> str:
    return f'<site name="foot" pos="0 0 {-body.shank_length_m!r}"/>'


class SerialRigLeg:
    """The serial hip→knee tree on the rig, joints ``hip`` and ``knee`` with native armature/damping.

    Damping is integrated implicitly (MuJoCo's ``eulerdamp``), as in the task's MuJoCo-Warp solver.
    """

    def __init__(self, body: LegBody, armature, damping, dt: float, rig: RigCfg, start: Sequence[float]):
        import mujoco

        self._mujoco = mujoco
        joint = '<joint name="{}" type="hinge" axis="0 1 0" armature="{!r}" damping="{!r}"/>'
        leg_xml = leg_bodies_xml(
            body,
            joint.format("hip", float(armature[0]), float(damping[0])),
            joint.format("knee", float(armature[1]), float(damping[1])),
            shank_extra=_foot_site(body),
        )
        self.model = mujoco.MjModel.from_xml_string(rig_mjcf("serial_rig", body, leg_xml, "", rig, dt, start))
        self.model.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
        self.data = mujoco.MjData(self.model)
        self._qpos = [int(self.model.jnt_qposadr[self.model.joint(n).id]) for n in ("hip", "knee")]
        #: Indices of the ``(hip, knee)`` dofs in MuJoCo's velocity vector.
        self.dofs = [int(self.model.jnt_dofadr[self.model.joint(n).id]) for n in ("hip", "knee")]
        self.data.qpos[self._qpos] = start
        mujoco.mj_forward(self.model, self.data)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """Serial ``(q, q̇)`` (rad, rad/s)."""
        return self.data.qpos[self._qpos].copy(), self.data.qvel[self.dofs].copy()

    def step(self, joint_torque: Sequence[float]) -> None:
        """One physics step with ``joint_torque`` (N·m) on ``(hip, knee)``."""
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.dofs] = joint_torque
        self._mujoco.mj_step(self.model, self.data)


def oracle_rig(oracle_cfg: OracleCfg, rig: RigCfg, dt: float, start: Sequence[float]) -> ParallelogramOracle:
    """The closed-chain oracle on the rig, its loop closed at ``start`` (serial rad), at rest."""
    import mujoco

    body = oracle_cfg.body
    cfg = oracle_at_step(oracle_cfg, dt)
    leg_xml = oracle_leg_xml(cfg, shank_extra=_foot_site(body))
    mjcf = rig_mjcf("oracle_rig", body, leg_xml, loop_closure_xml(cfg), rig, dt, start)
    oracle = ParallelogramOracle(cfg, mjcf=mjcf)
    oracle.model.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
    oracle.reset(_J @ np.asarray(start, dtype=float))
    return oracle


def run_serial_rig(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float, rig: RigCfg):
    """The serial leg under :class:`LinkageDrive` on ``rig``, a PD update every step of ``dt`` (s)."""
    drive = LinkageDrive(drive_cfg, parallelogram_leg())
    leg = SerialRigLeg(body, drive.native_armature(), drive.native_damping(), dt, rig, joint_targets[0])
    return drive_loop(drive, joint_targets, dt, leg.state, lambda out: leg.step(out.joint_torque[0].numpy()))


def run_oracle_rig(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float, rig: RigCfg):
    """The oracle on ``rig`` with ``body``'s links, its motors under the same PD and limits (no S3N terms)."""
    s3n = drive_cfg.s3n
    oracle_cfg = OracleCfg(
        body=body,
        reflected_inertia_kgm2=tuple(s3n.reflected_inertia_kgm2),
        motor_damping_nms_per_rad=tuple(s3n.motor_damping_nms_per_rad),
    )
    oracle = oracle_rig(oracle_cfg, rig, dt, joint_targets[0])
    drive = LinkageDrive(bare_drive_cfg(drive_cfg), parallelogram_leg())
    inverse = np.linalg.inv(_J)
    run = drive_loop(
        drive,
        joint_targets,
        dt,
        lambda: (inverse @ oracle.motor_pos, inverse @ oracle.motor_vel),
        lambda out: oracle.step(out.motor_torque[0].numpy()),
    )
    run.info["max_loop_violation_m"] = oracle.constraint_violation_m()
    return run


def rmse(run: LegRun, reference: LegRun) -> dict:
    """Per-joint ``(hip, knee)`` RMSE of the position (rad) and the motors' torque ``Jᵀ τ_m*`` (N·m)."""
    return {
        "pos_rmse": np.sqrt(np.mean((run.joint_pos - reference.joint_pos) ** 2, axis=0)).tolist(),
        "tau_rmse": np.sqrt(np.mean((run.actuator_torque - reference.actuator_torque) ** 2, axis=0)).tolist(),
    }


def compare_estimates(
    drive_cfgs: dict[str, LinkageDriveCfg],
    body: LegBody,
    joint_targets: np.ndarray,
    dt: float,
    rigs: dict[str, RigCfg],
    estimates: Sequence[str] = ("previous", "torque_predicted"),
) -> dict:
    """RMSE against the oracle of each model under each acceleration estimate, per rig.

    Args:
        drive_cfgs: ``{model: drive config}``; the oracle takes its PD, limits and motor parameters
            from the first. Kin-Only has no explicit torque, so it runs once (as ``previous``).
        body: The leg's links (the same in both rigs).
        joint_targets: Serial targets per physics step (rad), ``(T, 2)``.
        dt: Physics and PD step (s).
        rigs: ``{name: rig}``, e.g. swing and stance.
        estimates: The ``acceleration_estimate`` values to compare.

    Returns:
        ``{rig: {model: {estimate: {"pos_rmse": [h, k], "tau_rmse": [h, k]}}}}``.
    """
    oracle_drive = next(iter(drive_cfgs.values()))
    result: dict = {}
    for rig_name, rig in rigs.items():
        oracle = run_oracle_rig(oracle_drive, body, joint_targets, dt, rig)
        result[rig_name] = {}
        for model, cfg in drive_cfgs.items():
            runs = estimates[:1] if cfg.s3n.model == "kin_only" else estimates
            result[rig_name][model] = {
                estimate: rmse(
                    run_serial_rig(replace(cfg, acceleration_estimate=estimate), body, joint_targets, dt, rig), oracle
                )
                for estimate in runs
            }
    return result


def mean_pos_rmse(entry: dict) -> float:
    """The mean over the two joints of an entry's position RMSE (rad)."""
    return float(np.mean(entry["pos_rmse"]))


def winner(per_estimate: dict) -> str:
    """The estimate with the smallest mean position RMSE."""
    return min(per_estimate, key=lambda estimate: mean_pos_rmse(per_estimate[estimate]))

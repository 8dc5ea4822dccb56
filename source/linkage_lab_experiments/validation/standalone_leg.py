"""The standalone serial leg and the closed-chain oracle on a robot's leg body, for the Isaac Lab cross-checks.

Both run through the shared :func:`~linkage_lab_experiments.analysis.leg_run.drive_loop` (the fidelity benchmark's
loop); the body is the robot's ``SPEC.extra("leg_body")`` (the one its task simulates).
"""

from __future__ import annotations

import numpy as np

from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.serial_leg import LegBody
from linkage_lab_experiments.analysis.leg_run import LegRun, run_serial_leg
from linkage_lab_experiments.analysis.leg_run import run_oracle_leg as _run_oracle_leg
from linkage_lab_experiments.analysis.oracle import OracleCfg

__all__ = ["LegRun", "run_oracle_leg", "run_standalone_leg"]


def run_standalone_leg(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float) -> LegRun:
    """The serial MuJoCo leg under the drive, a PD update every step of ``dt`` (s).

    The leg integrates damping implicitly (MuJoCo's ``eulerdamp``, on in the task's MuJoCo-Warp
    solver) rather than explicitly as the fidelity benchmark's leg, so both sides take the same step.
    """
    return run_serial_leg(drive_cfg, body, joint_targets, dt, implicit_damping=True)


def run_oracle_leg(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float) -> LegRun:
    """The closed-chain oracle with ``body``'s links, its motors driven by the same PD and limits.

    The controller is ``drive_cfg`` with Kin-Only and no motor terms: the oracle carries the motor
    inertia and damping physically on its motor joints, and the linkage inertia in its crank and rod.
    """
    s3n = drive_cfg.s3n
    oracle_cfg = OracleCfg(
        body=body,
        reflected_inertia_kgm2=tuple(s3n.reflected_inertia_kgm2),
        motor_damping_nms_per_rad=tuple(s3n.motor_damping_nms_per_rad),
    )
    return _run_oracle_leg(oracle_cfg, drive_cfg, joint_targets, dt)

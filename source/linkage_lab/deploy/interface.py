"""What a deploy runtime knows about the robot it drives: its wire, its motors' ranges and clamps, its joints' ranges.

Built from a bundle through the robot registry (the bundle names its robot): the robot's wire
(``RobotSpec.extras["deploy_wire"]``), its closed-chain model's motors and linkages (motor names, peak torques,
the transmissions that map a joint box to motor angles) and its serial description's joint ranges. The robot-side
code that turns samples into an observation and actions into motor targets is the bundle's own, the same code
``linkage-lab sim2sim`` runs (``RobotSpec.extras["sim2sim_io"]``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from linkage_lab.deploy.wire import WireSpec
from linkage_lab.robots.registry import MissingCapability
from linkage_lab.sim2sim.bundle import Bundle, BundleError
from linkage_lab.sim2sim.drive import MotorCommand
from linkage_lab.sim2sim.robot_side import resolve_robot
from linkage_lab.sim2sim.sensors import Sensors

#: Grid points per joint when a linkage's joint box is mapped to its motors' ranges.
_GRID = 9


@dataclass(frozen=True)
class RobotInterface:
    """The robot as the runtime sees it.

    Attributes:
        robot: The robot's name.
        wire: Its wire.
        control_period_s: The bundle's control period (s).
        motor_names: Motors in actuator order (the closed-chain model's).
        motor_ids: Their wire ids.
        motor_lower_rad: Lowest motor angle any pose in the joints' ranges needs (rad).
        motor_upper_rad: Highest (rad).
        max_torque_nm: Each motor's peak torque: no target's clamp goes above it (N·m).
        damping_kd: Each motor's damping in the damping state (N·m·s/rad): its own gain of the bundle's kd.
        joint_names: The policy's joints.
        joint_lower_rad: Their lower limits (rad).
        joint_upper_rad: Their upper limits (rad).
        default_joint_pos: The bundle's default pose, where the soft start ends (rad).
    """

    robot: str
    wire: WireSpec
    control_period_s: float
    motor_names: tuple[str, ...]
    motor_ids: np.ndarray
    motor_lower_rad: np.ndarray
    motor_upper_rad: np.ndarray
    max_torque_nm: np.ndarray
    damping_kd: np.ndarray
    joint_names: tuple[str, ...]
    joint_lower_rad: np.ndarray
    joint_upper_rad: np.ndarray
    default_joint_pos: np.ndarray


def load_robot_side(bundle: Bundle) -> tuple[Any, RobotInterface]:
    """The bundle's robot-side code (a :class:`~linkage_lab.sim2sim.drive.RobotSide`, on the base-velocity
    estimator) and the :class:`RobotInterface` of its robot.

    Raises:
        BundleError: The robot is unknown or has no wire, closed-chain model or robot-side code.
    """

    spec, factory = resolve_robot(bundle)
    try:
        make_wire = spec.extra("deploy_wire")
    except MissingCapability as exc:
        raise BundleError(f"bundle {bundle.path}: robot {bundle.robot} has no deploy wire ({exc})") from None
    chain = spec.closed_chain()
    wire: WireSpec = make_wire(chain)
    io = factory(bundle, chain, base_velocity="estimate", **dict(wire.io_options))
    joints = {j.name: j.limit_rad for j in spec.description_model().joints if j.limit_rad is not None}
    missing = [name for name in bundle.joint_names if name not in joints]
    if missing:
        raise BundleError(f"robot {bundle.robot}: no joint range for {', '.join(missing)}")
    joint_lower = np.array([joints[name][0] for name in bundle.joint_names])
    joint_upper = np.array([joints[name][1] for name in bundle.joint_names])
    motor_lower, motor_upper = motor_ranges(chain, dict(zip(bundle.joint_names, zip(joint_lower, joint_upper))))
    default = np.asarray(bundle.metadata["default_joint_pos"], dtype=np.float64)
    interface = RobotInterface(
        robot=bundle.robot,
        wire=wire,
        control_period_s=bundle.control_period_s,
        motor_names=tuple(chain.motor_names),
        motor_ids=wire.ids(chain.motor_names),
        motor_lower_rad=motor_lower,
        motor_upper_rad=motor_upper,
        max_torque_nm=np.array([m.peak_torque_nm for m in chain.motors], dtype=np.float64),
        damping_kd=_own_damping(io, chain, default),
        joint_names=tuple(bundle.joint_names),
        joint_lower_rad=joint_lower,
        joint_upper_rad=joint_upper,
        default_joint_pos=default,
    )
    return io, interface


def motor_ranges(chain: Any, joint_range: dict[str, tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Per motor (actuator order) the lowest and highest angle over its joints' box of ranges (rad): a direct
    motor's is its joint's range, a linkage's the extremes of its transmission over a grid of the box."""
    import torch

    lower, upper = {}, {}
    for name in chain.direct_joints:
        lower[name], upper[name] = joint_range[name]
    for group, transmission in zip(chain.linkages, chain.transmissions, strict=True):
        axes = [np.linspace(*joint_range[j], _GRID) for j in group.joints]
        poses = torch.tensor(list(itertools.product(*axes)), dtype=torch.float64)
        angles = transmission.motor_position(poses).numpy()
        for k, motor in enumerate(group.motors):
            lower[motor], upper[motor] = float(angles[:, k].min()), float(angles[:, k].max())
    return np.array([lower[m] for m in chain.motor_names]), np.array([upper[m] for m in chain.motor_names])


def _own_damping(io: Any, chain: Any, default_joint_pos: np.ndarray) -> np.ndarray:
    """Each motor's own kd (the diagonal) of the robot side's command at the default pose."""
    at_rest = sensors_at_rest(chain.motor_position(dict(zip(chain.joint_names, default_joint_pos))))
    command: MotorCommand = io.target_command(at_rest, default_joint_pos)
    io.reset()
    kd = np.asarray(command.kd, dtype=np.float64)
    return np.diag(kd).copy() if kd.ndim == 2 else kd.copy()


def sensors_at_rest(motor_pos: np.ndarray) -> Sensors:
    """What a robot standing still and level senses with its motors at ``motor_pos`` (no odometry: NaN)."""
    n = len(motor_pos)
    return Sensors(
        time_s=0.0,
        motor_pos_rad=np.asarray(motor_pos, dtype=np.float64),
        motor_vel_rads=np.zeros(n),
        motor_torque_nm=np.zeros(n),
        gyro_b=np.zeros(3),
        accelerometer_b=np.array([0.0, 0.0, 9.81]),
        quat_wxyz=np.array([1.0, 0.0, 0.0, 0.0]),
        base_pos_w=np.full(3, np.nan),
        base_lin_vel_b=np.full(3, np.nan),
    )

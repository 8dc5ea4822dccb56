"""Marvin's robot side in sim-to-sim: the bundle's ankle bridge between the closed-chain model's cranks and the policy.

The hips, knees and arms are their own motors: their encoders are the joint angles, their drivers run the
joint PD (the bundle's kp/kd). Each ankle is two crank motors; the policy sees pitch/roll from the crank
encoders through the bridge's ``fk`` graph (warm-started from the previous estimate) and ``velocity``
graph. Its pitch/roll targets reach the cranks in one of the two modes of docs/design/ankle_linkage.md §8:

* ``host_torque`` (the export's mode, ``EXPORT_GAIN_MODE``): the host runs the joint-space PD at every
  physics step on the FK estimate, ``τ_j = K_j (q* − q) − D_j q̇``, and sends ``τ_m = J⁻ᵀ τ_j`` (the
  ``torque`` graph) with crank kp = kd = 0; the drivers clamp each motor to its peak, as the diamond does.
* ``motor_pd``: crank targets ``θ* = IK(q*)`` (the ``ik`` graph, reachability checked) and the coupled
  2 × 2 motor gains ``K_m = J⁻ᵀ K_j J⁻¹``, ``D_m = J⁻ᵀ D_j J⁻¹`` at the tick's pose (the ``gains`` graph),
  for a driver that takes a full motor-space PD; held for the control period.

Joint kp/kd are never copied to the cranks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from linkage_lab.deploy.ankle_bridge import FUNCTIONS, bridge_filename
from linkage_lab.deploy.onnx_session import cpu_session
from linkage_lab.robots.marvin.bundle import ANKLE_BRIDGE_DIR
from linkage_lab.robots.marvin.config import marvin_config
from linkage_lab.robots.marvin.estimator import marvin_base_velocity_estimator
from linkage_lab.robots.marvin.joints import SIDES
from linkage_lab.robots.marvin.race import (
    HEADING_HOLD_GAIN_PER_S,
    LANE_LOOKAHEAD_M,
    RACE_COMMAND_MPS,
    RESIDUAL_RACE_COMMAND_MPS,
    RESIDUAL_RACE_GAIT_FREQUENCY_HZ,
)
from linkage_lab.sim2sim.bundle import Bundle, BundleError, BundlePolicy
from linkage_lab.sim2sim.drive import MotorCommand
from linkage_lab.sim2sim.sensors import Sensors
from linkage_lab.sim2sim.velocity_source import VelocitySource, bundle_estimator

ANKLE_MODES = ("host_torque", "motor_pd")
#: FK's last Newton step above this flags an estimate that did not converge (rad; the bridge's doc).
FK_CONVERGED_RAD = 1e-6
#: The residual sprint's command (``LinkageLab-Sprint-Marvin-Residual``): its forward speed, the gait cadence
#: it races at, the top of the residual task's yaw-rate range (``tests/unit/test_sim2sim_runner.py`` checks them
#: against the tasks), and the race's lane keeping.
RESIDUAL_RACE = {
    "forward_mps": RESIDUAL_RACE_COMMAND_MPS,
    "gait_frequency_hz": RESIDUAL_RACE_GAIT_FREQUENCY_HZ,
    "heading_gain_per_s": HEADING_HOLD_GAIN_PER_S,
    "yaw_rate_limit_rads": 0.2,
    "lane_lookahead_m": LANE_LOOKAHEAD_M,
}
#: The plain sprint's command (``LinkageLab-Sprint-Marvin``): forward only.
PLAIN_RACE = {"forward_mps": RACE_COMMAND_MPS}


class AnkleBridge:
    """One ankle's bridge graphs (``ankle_<side>_<function>.onnx``) run with onnxruntime, batch 1.

    Args:
        bundle: The bundle holding ``ankle_bridge/``.
        side: ``left`` or ``right``.
    """

    def __init__(self, bundle: Bundle, side: str):

        self.side = side
        self.sessions = {
            function: cpu_session(bundle.file(f"{ANKLE_BRIDGE_DIR}/{bridge_filename(side, function)}"))
            for function in FUNCTIONS
        }

    def _run(self, function: str, **inputs: np.ndarray) -> list[np.ndarray]:
        feeds = {
            name: np.asarray(value, dtype=np.float32).reshape(1, *np.shape(value)) for name, value in inputs.items()
        }
        return [out[0] for out in self.sessions[function].run(None, feeds)]

    def ik(self, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Crank targets (rad from neutral) and reachability for a pose target (pitch, roll)."""
        crank, reachable = self._run("ik", joint_pos_target=pose)
        return crank.astype(np.float64), reachable

    def fk(self, crank: np.ndarray, guess: np.ndarray) -> tuple[np.ndarray, float]:
        """Pose (pitch, roll) from crank angles, warm-started at ``guess``; and the last Newton step (rad)."""
        pose, last_step = self._run("fk", crank_pos=crank, joint_pos_guess=guess)
        return pose.astype(np.float64), float(last_step)

    def velocity(self, crank_vel: np.ndarray, pose: np.ndarray) -> np.ndarray:
        """Pitch/roll rates ``J⁻¹ θ̇`` (rad/s)."""
        return self._run("velocity", crank_vel=crank_vel, joint_pos=pose)[0].astype(np.float64)

    def gains(self, pose: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Coupled motor gains ``J⁻ᵀ diag(k) J⁻¹`` (2 × 2 each)."""
        motor_kp, motor_kd = self._run("gains", joint_pos=pose, joint_kp=kp, joint_kd=kd)
        return motor_kp.astype(np.float64), motor_kd.astype(np.float64)

    def torque(self, pose: np.ndarray, joint_torque: np.ndarray) -> np.ndarray:
        """Motor torques ``J⁻ᵀ τ_j`` (N·m)."""
        return self._run("torque", joint_pos=pose, joint_torque=joint_torque)[0].astype(np.float64)


class MarvinSim2SimIO:
    """Marvin's :class:`~linkage_lab.sim2sim.drive.RobotSide`: direct joints, ankles through the bridge.

    Args:
        bundle: The exported bundle (``policy.onnx``, ``ankle_bridge/``, and ``gait.onnx`` when residual).
        chain: Marvin's closed-chain model.
        ankle_mode: ``host_torque`` or ``motor_pd`` (see the module); ``None``: the bundle's
            ``ankle_gain_mode``.
        base_velocity: ``estimate`` (the robot's estimator: IMU + leg kinematics + contact) or ``truth`` (the
            simulator's base velocity, for comparison).

    Raises:
        BundleError: A bridge file is missing, or the mode or ``base_velocity`` is unknown.
    """

    def __init__(self, bundle: Bundle, chain: Any, ankle_mode: str | None = None, base_velocity: str = "estimate"):
        mode = ankle_mode or bundle.metadata.get("ankle_gain_mode") or ANKLE_MODES[0]
        if mode not in ANKLE_MODES:
            raise BundleError(f"unknown ankle mode {mode!r}; known: {', '.join(ANKLE_MODES)}")
        self.ankle_mode = mode
        self.bundle = bundle
        self.policy = BundlePolicy(bundle)
        self.control_period_s = bundle.control_period_s
        self.joint_names = bundle.joint_names
        motors = list(chain.motor_names)
        self.num_motors = len(motors)
        self.bridges = {side: AnkleBridge(bundle, side) for side in SIDES}
        joint = {name: i for i, name in enumerate(self.joint_names)}
        #: Per side: policy indices of (pitch, roll), actuator indices of (motor a, motor b).
        self.ankles: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for group in chain.linkages:
            side = group.joints[0].split("_", 1)[0]
            self.ankles[side] = (
                np.array([joint[j] for j in group.joints]),
                np.array([motors.index(m) for m in group.motors]),
            )
        self.direct = np.array([joint[j] for j in chain.direct_joints])
        self.direct_motor = np.array([motors.index(j) for j in chain.direct_joints])
        self.kp = np.asarray(bundle.metadata["kp"], dtype=np.float64)
        self.kd = np.asarray(bundle.metadata["kd"], dtype=np.float64)
        self.peak = np.array([m.peak_torque_nm for m in chain.motors])
        self.default_joint_pos = np.asarray(bundle.metadata["default_joint_pos"], dtype=np.float64)
        try:
            estimator = bundle_estimator(
                bundle, self.joint_names, lambda: marvin_base_velocity_estimator(marvin_config(), self.joint_names)
            )
            self.velocity = VelocitySource(estimator, base_velocity, self.control_period_s)
        except ValueError as exc:
            raise BundleError(str(exc)) from None
        self.reset()

    def reset(self) -> None:
        """Forget the last action, the gait state and the FK warm starts (back to the standing pose)."""
        self.policy.reset()
        self.velocity.reset()
        self._guess = {side: self.default_joint_pos[index] for side, (index, _) in self.ankles.items()}

    def sprint_command(self, scripted: bool = False) -> dict[str, float]:
        """The race's command of the sprint task this bundle's policy (or the scripted gait, which races on
        the plain sprint) races on in Isaac Lab."""
        residual = self.bundle.metadata.get("residual_gait") is not None and not scripted
        return dict(RESIDUAL_RACE if residual else PLAIN_RACE)

    @property
    def gait_frequency_hz(self) -> float | None:
        """The cadence of the bundle's gait prior (``gait.onnx``, Hz); ``None`` without one."""
        gait = self.bundle.metadata.get("residual_gait")
        return None if gait is None else float(gait["frequency_hz"])

    def ankle_estimate(
        self, sensors: Sensors, side: str, update_guess: bool = True
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """One ankle's (pitch, roll) and rates from its crank encoders (FK, velocity), and FK's last step."""
        _, motors = self.ankles[side]
        pose, last_step = self.bridges[side].fk(sensors.motor_pos_rad[motors], self._guess[side])
        if update_guess:
            self._guess[side] = pose
        return pose, self.bridges[side].velocity(sensors.motor_vel_rads[motors], pose), last_step

    def joint_estimate(self, sensors: Sensors) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles and rates (policy order): direct joints from their encoders, ankles from the bridge."""
        return self._estimate(sensors)[:2]

    def _estimate(self, sensors: Sensors) -> tuple[np.ndarray, np.ndarray, int]:
        pos, vel = np.zeros(len(self.joint_names)), np.zeros(len(self.joint_names))
        pos[self.direct] = sensors.motor_pos_rad[self.direct_motor]
        vel[self.direct] = sensors.motor_vel_rads[self.direct_motor]
        unconverged = 0
        for side, (index, _) in self.ankles.items():
            pos[index], vel[index], last_step = self.ankle_estimate(sensors, side)
            unconverged += last_step > FK_CONVERGED_RAD
        return pos, vel, unconverged

    def policy_command(self, sensors: Sensors, command: np.ndarray) -> MotorCommand:
        """One tick of the bundle's policy on the sensed values, then :meth:`target_command`."""
        pos, vel, _ = self._estimate(sensors)
        values = {
            "base_lin_vel": self.velocity(sensors, pos, vel),
            "base_ang_vel": sensors.gyro_b,
            "projected_gravity": sensors.projected_gravity_b,
            "generated_commands": np.asarray(command, dtype=np.float64),
            "joint_pos_rel": pos - self.default_joint_pos,
            "joint_vel_rel": vel,
        }
        return self.target_command(sensors, self.policy.step(values))

    def target_command(self, sensors: Sensors, joint_targets: np.ndarray) -> MotorCommand:
        """Joint targets (rad, policy order) to the motors: joint PD on the direct motors, the ankles in
        :attr:`ankle_mode`."""
        n = self.num_motors
        position, kp, kd = np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
        position[self.direct_motor] = joint_targets[self.direct]
        kp[self.direct_motor, self.direct_motor] = self.kp[self.direct]
        kd[self.direct_motor, self.direct_motor] = self.kd[self.direct]
        notes = {"ankle_fk_unconverged": 0, "ankle_ik_unreachable": 0}
        host = None
        if self.ankle_mode == "host_torque":
            host = self._host_ankle_pd(joint_targets, notes)
        else:
            for side, (index, motors) in self.ankles.items():
                crank, reachable = self.bridges[side].ik(joint_targets[index])
                notes["ankle_ik_unreachable"] += int(not np.all(reachable))
                pose, _, last_step = self.ankle_estimate(sensors, side)
                notes["ankle_fk_unconverged"] += int(last_step > FK_CONVERGED_RAD)
                motor_kp, motor_kd = self.bridges[side].gains(pose, self.kp[index], self.kd[index])
                position[motors] = crank
                kp[np.ix_(motors, motors)] = motor_kp
                kd[np.ix_(motors, motors)] = motor_kd
        return MotorCommand(position, np.zeros(n), kp, kd, self.peak.copy(), host=host, notes=notes)

    def _host_ankle_pd(self, joint_targets: np.ndarray, notes: dict[str, int]) -> Any:
        """The host loop of ``host_torque``: every physics step, FK → joint PD → ``J⁻ᵀ`` → crank torques."""
        targets = {side: np.asarray(joint_targets[index], dtype=np.float64) for side, (index, _) in self.ankles.items()}

        def host(sensors: Sensors) -> np.ndarray:
            torque = np.zeros(self.num_motors)
            for side, (index, motors) in self.ankles.items():
                pose, rate, last_step = self.ankle_estimate(sensors, side)
                notes["ankle_fk_unconverged"] += int(last_step > FK_CONVERGED_RAD)
                joint_torque = self.kp[index] * (targets[side] - pose) - self.kd[index] * rate
                torque[motors] = self.bridges[side].torque(pose, joint_torque)
            return torque

        return host

    def policy_trace(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The last policy tick's observation and raw action (before any non-finite action was zeroed)."""
        return self.policy.last_observation, self.policy.last_raw_action

    def describe(self) -> dict[str, Any]:
        """The ankle mode and what the observation reads."""
        return {
            "code": "linkage_lab.sim2sim.bundle.BundlePolicy + the bundle's ankle_bridge/*.onnx"
            + (" + gait.onnx (ResidualGaitComposer)" if self.policy.composer is not None else ""),
            "ankle_mode": self.ankle_mode,
            "ankle_estimate": "crank encoders -> fk.onnx (warm start: previous estimate) -> velocity.onnx",
            "observation": self.policy.observation.sources(),
            "base_velocity": self.velocity.report(),
            "drivers": "per-motor joint PD on hips/knees/arms; ankles: "
            + (
                "host PD every physics step, torque.onnx -> crank torques (kp = kd = 0)"
                if self.ankle_mode == "host_torque"
                else "ik.onnx crank targets with the 2x2 gains.onnx motor gains"
            ),
        }

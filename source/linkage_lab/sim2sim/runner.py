"""Run an exported bundle on a robot's closed-chain MuJoCo model exactly as the robot would run it.

:func:`run_sim2sim` is the whole run as a function (the CLI and scripts call it): the bundle's robot
(``metadata.json``) names the closed-chain model (``RobotSpec.closed_chain``) and the robot-side code
(``RobotSpec.extras["sim2sim_io"]``: a :class:`~linkage_lab.sim2sim.drive.RobotSide`). Timing:

* MuJoCo steps at the model's timestep; every step runs ``mj_step1`` (positions, contacts, sensors), the
  motor drivers' PD on the held :class:`~linkage_lab.sim2sim.drive.MotorCommand` and any host loop, the
  torque–speed clip (:meth:`~linkage_lab.sim2sim.model.ClosedChainModel.apply_motor_torque`), ``mj_step2``;
* the policy (or a scripted gait) runs once per bundle control period, on what the robot senses
  (:mod:`~linkage_lab.sim2sim.sensors`), and its command holds until the next tick.

The robot starts at rest in its closed-chain model's standing pose with its feet on the ground. It has
fallen when its base drops below the sprint's fall fraction of that standing height, or tilts past 60°
(:class:`~linkage_lab.sim2sim.metrics.FallRule`); the run then ends, as an Isaac Lab episode would.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.evaluation.video import RolloutRecorder
from linkage_lab.io import write_json_atomic
from linkage_lab.outputs import write_output
from linkage_lab.paths import REPO_ROOT
from linkage_lab.robots.assets import asset_paths
from linkage_lab.sim2sim.bundle import Bundle, BundleError, load_bundle
from linkage_lab.sim2sim.drive import MotorCommand, RobotSide, driver_clamp, motor_pd_torque
from linkage_lab.sim2sim.latency import DelayLine, Latency
from linkage_lab.sim2sim.metrics import FallRule, MotorTorqueStats, feet_in_contact, foot_geoms
from linkage_lab.sim2sim.mjcf import FREE_JOINT, Ground, SolverSettings
from linkage_lab.sim2sim.race import SPRINT_HEADING, SPRINT_LANE, heading_hold, race_as_it_stands, sprint_setup
from linkage_lab.sim2sim.robot_side import check_io_options, resolve_robot
from linkage_lab.sim2sim.sensors import ImuAverage, SensorNoiseModel, SensorReader, Sensors
from linkage_lab.sim2sim.stress import PhysicsStress
from linkage_lab.typed_config import SensorNoise

#: The command name in the output folder's manifest (:mod:`linkage_lab.outputs`).
SIM2SIM_COMMAND = "sim2sim"
#: The report file.
REPORT_FILE = "sim2sim.json"
#: Version of the report layout.
SCHEMA_VERSION = 1
#: Where ``--policy`` takes its joint targets from.
POLICIES = ("bundle", "scripted")
#: ``sensor_noise`` value: the robot config's ``sensors`` model (the default; exact sensors if it has none).
ROBOT_SENSORS = "robot"


class _Run:
    """The state of one run: model, robot side, statistics, and the per-tick bookkeeping."""

    def __init__(
        self,
        bundle: Bundle,
        spec: Any,
        factory: Any,
        io_options: dict[str, Any],
        stress: PhysicsStress | None = None,
        ground: Ground | None = None,
    ):
        import mujoco

        from linkage_lab.evaluation.metrics import FootContactStats, JointStopStats, TrackingStats

        check_io_options(factory, io_options, bundle.robot)
        self.chain = (
            spec.closed_chain() if ground is None else spec.closed_chain(settings=SolverSettings(ground=ground))
        )
        self.model = self.chain.compile()
        self.stress = PhysicsStress() if stress is None else stress
        self.stress.apply(self.model, self.chain.bind(self.model).motor_dof)
        self.data = mujoco.MjData(self.model)
        self.chain.reset(self.data)
        self.io: RobotSide = factory(bundle, self.chain, **io_options)
        self.reader = SensorReader(self.chain, self.model)
        self.dt = float(self.model.opt.timestep)
        self.substeps = round(bundle.control_period_s / self.dt)
        if self.substeps < 1 or abs(self.substeps * self.dt - bundle.control_period_s) > 1e-9:
            raise BundleError(
                f"bundle control period {bundle.control_period_s} s is not a multiple of the model's "
                f"timestep {self.dt} s"
            )
        # The IMU's specific force as the estimator steps over it: the tick's mean, or each step's own for a robot
        # side whose estimator steps on every sample (``estimator_rate="sample"``).
        per_sample = getattr(self.io, "estimator_rate", "tick") == "sample"
        self.imu = ImuAverage(1 if per_sample else self.substeps)
        self.fall_rule = FallRule.from_standing_height(float(self.reader.read(self.data).base_pos_w[2]))
        self.torques = MotorTorqueStats(self.chain.motor_names, [m.peak_torque_nm for m in self.chain.motors], self.dt)
        self.tracking = TrackingStats()
        self.feet = foot_geoms(self.model, self.chain.base_body)
        self.footfalls = FootContactStats(list(self.feet), 1, bundle.control_period_s)
        self.stops = JointStopStats(*_joint_ranges(self.model, self.chain.joint_names))
        self.notes: dict[str, float] = {}

    def sense(self) -> Sensors:
        import mujoco

        mujoco.mj_step1(self.model, self.data)
        return self.imu.add(self.reader.read(self.data))

    def physics_step(self, command: MotorCommand, sensors: Sensors) -> None:
        import mujoco

        demanded = motor_pd_torque(command, sensors)
        strength = self.stress.motor_strength
        applied = self.chain.apply_motor_torque(self.data, driver_clamp(command, demanded), strength)
        # Saturation is judged on the drivers' commands (what the limits cut), before the motors' strength.
        self.torques.add(demanded, applied / strength)
        mujoco.mj_step2(self.model, self.data)

    def record_tick(self, sensors: Sensors, command: np.ndarray) -> None:
        import torch

        as_row = lambda v: torch.as_tensor(np.asarray(v, dtype=np.float64)).reshape(1, -1)  # noqa: E731
        alive = torch.ones(1, dtype=torch.bool)
        self.tracking.add(as_row(command), as_row(sensors.base_lin_vel_b), as_row(sensors.gyro_b), alive)
        contact = torch.as_tensor(feet_in_contact(self.data, self.feet)).reshape(1, -1)
        self.footfalls.add(contact, alive)
        self.stops.add(as_row(self.chain.joint_state(self.data)[0]))

    def add_notes(self, command: MotorCommand) -> None:
        for key, value in command.notes.items():
            self.notes[key] = self.notes.get(key, 0) + value


def _joint_ranges(model: Any, names: Sequence[str]) -> tuple[Any, Any]:
    """``(lower, upper)`` of the named joints' ranges in the compiled model (rad; ``±inf`` where unlimited)."""
    import mujoco
    import torch

    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in names]
    limited = model.jnt_limited[ids].astype(bool)
    lower = np.where(limited, model.jnt_range[ids, 0], -np.inf)
    upper = np.where(limited, model.jnt_range[ids, 1], np.inf)
    return torch.as_tensor(lower), torch.as_tensor(upper)


def run_sim2sim(
    bundle: str | Path | Bundle,
    command: Sequence[float] | None = (0.3, 0.0),
    duration_s: float | None = 10.0,
    sprint: bool = False,
    policy: str = "bundle",
    video: str | Path | None = None,
    progress: bool = False,
    io_options: dict[str, Any] | None = None,
    base_kick: Sequence[float] | None = None,
    delays_s: tuple[float, float] = (0.0, 0.0),
    stress: PhysicsStress | None = None,
    ground: Ground | None = None,
    sensor_noise: SensorNoise | str | None = ROBOT_SENSORS,
    noise_seed: int | Sequence[int] = 0,
) -> dict[str, Any]:
    """Run ``bundle`` on its robot's closed-chain model and return the report (``sim2sim.json``).

    Args:
        bundle: An exported bundle folder (or a loaded :class:`~linkage_lab.sim2sim.bundle.Bundle`).
        command: ``(v_x, ω_z)`` (m/s, rad/s), held for the run; with ``sprint``, ``None`` takes the robot
            side's race command (and its heading hold) and a value sets the forward speed.
        duration_s: Simulated time (s); with ``sprint`` ``None`` runs to the race's time limit.
        sprint: Referee the run as the 10 m sprint (docs/design/gait.md §4,
            :class:`~linkage_lab.sprint.rules.SprintTracker`)
            and end it when the race ends.
        policy: ``"bundle"`` (the bundle's ``policy.onnx``) or ``"scripted"`` (the robot's scripted gait, or
            its sprint gait with ``sprint``, through the bundle's robot-side conversion).
        video: Render the run to this ``.mp4``/``.gif`` with the evaluation's offscreen renderer (the robot's
            serial URDF posed from the closed-chain joint angles); ``None``: no video.
        progress: Show a progress bar.
        io_options: Options of the robot side (its ``sim2sim_io`` extra), e.g. an ankle gain mode.
        base_kick: ``(v_x, v_y, ω_z)`` (m/s in the world, rad/s) given to the base at rest before the first
            tick, as Isaac Lab's ``reset_base`` kicks an episode's start; ``None``: it starts at rest.
        delays_s: ``(observation, action)`` delays in s, rounded to the model's physics step
            (:class:`~linkage_lab.sim2sim.latency.Latency`): the policy acts on a sample that old, and the
            drives apply its targets that much later.
        stress: Motors, rotors and floor changed from the model's nominal constants
            (:class:`~linkage_lab.sim2sim.stress.PhysicsStress`); ``None``: nominal.
        ground: The terrain (:class:`~linkage_lab.sim2sim.mjcf.Ground`, e.g. :func:`~linkage_lab.sim2sim.mjcf.stairs`)
            under the model's default solver settings; ``None``: the robot model's own (flat).
        sensor_noise: What the controller's readings carry (:class:`~linkage_lab.sim2sim.sensors.SensorNoiseModel`):
            :data:`ROBOT_SENSORS` the robot config's ``sensors`` section, a :class:`SensorNoise`, or ``None``
            for the model's exact sensors.
        noise_seed: Seed of the sensor noise's draws.

    Returns:
        The report: tracking, falls, footfalls, per-motor torques and saturation, each joint's share of the
        time on a stop of its range, the sprint's metrics
        (``sprint``), the sensing and robot-side conversion used, timing.

    Raises:
        BundleError: The bundle cannot be run (missing, corrupt metadata, unknown robot, no closed chain).
        ValueError: An unknown ``policy``, or a duration that is not positive.
    """
    from linkage_lab.sim2sim.scripted import ScriptedTargets, scripted_gait
    from linkage_lab.sprint.rules import SprintCfg, SprintTracker

    _check_request(policy, duration_s, sprint)
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    spec, factory = resolve_robot(bundle)
    start = time.perf_counter()
    run = _Run(bundle, spec, factory, dict(io_options or {}), stress, ground)
    latency = Latency.from_seconds(*delays_s, run.dt)
    noise = _sensor_noise(spec, sensor_noise, noise_seed)
    if base_kick is not None:
        _kick_base(run, base_kick)
    hold, tracker = None, None
    if sprint:
        base_command, hold = sprint_setup(run.io, command, policy == "scripted")
        rules = SprintCfg(fall_height_m=run.fall_rule.height_m)
        tracker = SprintTracker(1, rules)
        duration_s = rules.time_limit_s if duration_s is None else min(duration_s, rules.time_limit_s)
    else:
        base_command = np.array([float(command[0]), 0.0, float(command[1])])
    scripted = None
    if policy == "scripted":
        gait = scripted_gait(bundle.robot, sprint, bundle.joint_names)
        scripted = ScriptedTargets(gait, bundle.joint_names, bundle.control_period_s)
    recorder = _recorder(bundle) if video is not None else None
    ended, fall, sprint_metrics = _drive(
        run, bundle, base_command, hold, scripted, tracker, recorder, duration_s, progress, latency, noise
    )
    report = _report(run, bundle, scripted, base_command, hold, duration_s, time.perf_counter() - start)
    report.update(ended_reason=ended, falls=int(fall is not None), fall_rate=float(fall is not None), fall=fall)
    report["sprint"] = sprint_metrics
    report["base_kick"] = None if base_kick is None else [float(v) for v in base_kick]
    report["latency"] = latency.report(run.dt)
    report["sensor_noise"] = None if noise is None else noise.describe()
    report["physics_stress"] = run.stress.report()
    report["ground"] = {"boxes": [dataclasses.asdict(box) for box in (ground.boxes if ground else ())]}
    if recorder is not None:
        from linkage_lab.evaluation.video import save_rollout_video

        report["video"] = save_rollout_video(recorder, video, progress=progress)
    return report


def _kick_base(run: _Run, kick: Sequence[float]) -> None:
    """Add ``(v_x, v_y, ω_z)`` to the floating base's velocity (a free joint's linear velocity is in the world
    frame, its angular velocity in the body's, whose z is the world's at the upright start)."""
    import mujoco

    values = [float(v) for v in kick]
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"base_kick must be three finite numbers (v_x, v_y, omega_z), got {kick!r}")
    free = mujoco.mj_name2id(run.model, mujoco.mjtObj.mjOBJ_JOINT, FREE_JOINT)
    if free < 0:
        raise ValueError(f"{run.chain.name} has no floating base to kick")
    dof = int(run.model.jnt_dofadr[free])
    run.data.qvel[dof : dof + 2] += values[:2]
    run.data.qvel[dof + 5] += values[2]


def _sensor_noise(spec: Any, sensor_noise: SensorNoise | str | None, seed: int | Sequence[int]) -> Any:
    """The run's :class:`SensorNoiseModel`, or ``None`` for exact sensors."""
    if sensor_noise == ROBOT_SENSORS:
        sensor_noise = getattr(spec.config(), "sensors", None)
    elif sensor_noise is not None and not isinstance(sensor_noise, SensorNoise):
        raise ValueError(f"sensor_noise must be {ROBOT_SENSORS!r}, a SensorNoise or None, got {sensor_noise!r}")
    return None if sensor_noise is None else SensorNoiseModel(sensor_noise, seed)


def _check_request(policy: str, duration_s: float | None, sprint: bool) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
    if duration_s is None and not sprint:
        raise ValueError("a run needs a duration (only a sprint runs to its time limit)")
    if duration_s is not None and not duration_s > 0:
        raise ValueError(f"duration must be positive, got {duration_s}")


def _recorder(bundle: Bundle) -> Any:
    """A recorder of the run for the evaluation's offscreen renderer (the serial URDF posed from the run)."""

    return RolloutRecorder(list(bundle.joint_names), bundle.control_period_s, asset_paths(bundle.robot)["urdf"])


def _drive(
    run: _Run,
    bundle: Bundle,
    base_command: np.ndarray,
    hold: dict[str, float] | None,
    scripted: Any,
    tracker: Any,
    recorder: Any,
    duration_s: float,
    progress: bool,
    latency: Latency = Latency(),
    noise: SensorNoiseModel | None = None,
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """The control loop: ``(ended_reason, fall, sprint metrics)``. The controller reads ``noise``'s corrupted
    samples, the drives and the scoring the exact ones."""
    import torch
    from tqdm import tqdm

    io = run.io
    io.reset()
    ticks = int(round(duration_s / bundle.control_period_s))
    ended, fall, sprint_metrics = "duration", None, None
    sensors = run.sense()
    observed, applied = DelayLine(latency.observation_steps), DelayLine(latency.action_steps)
    read = (lambda exact: exact) if noise is None else noise  # noqa: E731
    on_sample = getattr(io, "on_sample", None)  # a robot side that also takes every sample between ticks

    def push(sensors: Sensors) -> Sensors:
        """The controller's sample now: the reading of observation_steps ago, handed to ``on_sample`` too."""
        sample = observed.push(read(sensors))
        if on_sample is not None:
            on_sample(sample)
        return sample

    sample = push(sensors)  # what the controller has read: the sample of observation_steps ago
    if hold is not None:
        hold["start_y_m"] = float(sensors.base_pos_w[1])
    if tracker is not None:
        tracker.update(0.0, torch.as_tensor(sensors.base_pos_w).reshape(1, 3))
    with tqdm(total=ticks, desc="sim2sim", unit="tick", disable=not progress, mininterval=2.0) as bar:
        for tick in range(ticks):
            tick_command = heading_hold(base_command, sample, hold)
            if scripted is None:
                motor_command = io.policy_command(sample, tick_command)
            else:
                motor_command = io.target_command(sample, scripted(sample, tick_command))
            for substep in range(run.substeps):
                if substep:
                    sensors = run.sense()
                    sample = push(sensors)
                # The drives' PD reads their own encoders now; the targets reach them action_steps late.
                run.physics_step(applied.push(motor_command), sensors)
            run.add_notes(motor_command)  # after the period: a host loop counts into them too
            sensors = run.sense()
            sample = push(sensors)
            if not (np.isfinite(run.data.qpos).all() and np.isfinite(run.data.qvel).all()):
                ended = "nonfinite_state"
                break
            run.record_tick(sensors, tick_command)
            if recorder is not None:
                joint_pos, _ = run.chain.joint_state(run.data)
                recorder.add(sensors.base_pos_w, np.roll(sensors.quat_wxyz, -1), joint_pos)
            bar.update(1)
            if tick % 25 == 0:
                bar.set_postfix(x_m=f"{sensors.base_pos_w[0]:.2f}", refresh=False)
            reason = run.fall_rule.check(float(sensors.base_pos_w[2]), sensors.projected_gravity_b)
            if reason is not None:
                ended, fall = "fell", {"time_s": round(run.data.time, 9), "by": reason}
            if tracker is not None:
                now = round((tick + 1) * bundle.control_period_s, 9)
                done = tracker.update(now, torch.as_tensor(sensors.base_pos_w).reshape(1, 3))
                if bool(done[0]):
                    sprint_metrics = tracker.metrics(0)
                    ended = sprint_metrics["ended_reason"]
                    break
            if fall is not None:
                break
    if tracker is not None and sprint_metrics is None:
        # A tilt fall, a duration cap or a non-finite state stopped the run before the referee did.
        sprint_metrics = race_as_it_stands(tracker, "fell" if fall is not None else ended)
    return ended, fall, sprint_metrics


def _report(
    run: _Run,
    bundle: Bundle,
    scripted: Any,
    base_command: np.ndarray,
    hold: dict[str, float] | None,
    duration_s: float,
    wall_s: float,
) -> dict[str, Any]:
    """The report of a finished run (``sim2sim.json``; the caller adds the outcome: fall, sprint, video)."""
    import mujoco

    simulated = float(run.data.time)
    return {
        "schema_version": SCHEMA_VERSION,
        "bundle": str(bundle.path),
        "robot": bundle.robot,
        "task": bundle.metadata.get("task"),
        "policy": scripted.describe() if scripted is not None else {"type": "bundle", "file": "policy.onnx"},
        "simulator": {
            "engine": f"mujoco {mujoco.__version__}",
            "model": "closed chain (RobotSpec.closed_chain)",
            "timestep_s": run.dt,
            "control_period_s": bundle.control_period_s,
            "physics_steps_per_control_step": run.substeps,
            "motor_pd": "every physics step, on the held motor command, then the torque-speed clip",
            "notes": list(run.chain.notes),
        },
        "command": {
            "lin_vel_x_mps": float(base_command[0]),
            "ang_vel_z_radps": None if hold else float(base_command[2]),
            "heading_hold": None
            if hold is None
            else {**hold, "what": SPRINT_LANE if "lane_lookahead_m" in hold else SPRINT_HEADING},
        },
        "duration_s": float(duration_s),
        "simulated_s": simulated,
        "control_steps": run.tracking.samples,
        "ended_reason": None,
        "episodes": 1,
        "falls": None,
        "fall_rate": None,
        "fall": None,
        "fall_rule": run.fall_rule.describe(),
        "tracking": run.tracking.summary(),
        "footfalls": run.footfalls.summary(),
        "motor_torques": run.torques.summary(),
        "joint_stops": run.stops.summary(list(run.chain.joint_names)),
        "robot_side": {**run.io.describe(), "counts": run.notes},
        "sprint": None,
        "wall_time_s": wall_s,
        "realtime_factor": simulated / wall_s if wall_s > 0 else None,
    }


def default_out_dir(bundle: str | Path, policy: str, sprint: bool) -> Path:
    """``outputs/sim2sim/<bundle folder>_<policy>[_sprint]``."""

    name = f"{Path(bundle).resolve().name}_{policy}" + ("_sprint" if sprint else "")
    return REPO_ROOT / "outputs" / "sim2sim" / name


def write_report(report: dict[str, Any], out_dir: Path, force: bool = False) -> Path:
    """Write ``sim2sim.json`` into ``out_dir``, whole or not at all (:func:`~linkage_lab.outputs.write_output`).

    Raises:
        OutputWriteError: ``out_dir`` could not be written; the report went to a temp folder it names.
    """

    write_output(out_dir, SIM2SIM_COMMAND, lambda folder: write_json_atomic(folder / REPORT_FILE, report), force)
    return Path(out_dir) / REPORT_FILE

"""Bounded headless evaluation of a policy on a task: ``eval.json`` and, for linkage ankles, the replay plots.

The loop stops after the requested number of completed episodes or at a step cap, whichever comes
first; it never runs open-ended. Statistics are taken once per control step, after ``env.step``:
episode returns and lengths, velocity tracking and forward speed (envs whose episode ended at
that step are left out: their state already belongs to the next episode). Joint torques and the
ankle replay see every physics substep (``decimation`` per control step): each substep's applied
and commanded joint torques, and each substep's commanded ankle torque at the pose it was commanded
at (see :mod:`linkage_lab.evaluation.probe`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from linkage_lab.evaluation import probe as probe_module
from linkage_lab.evaluation.metrics import (
    EpisodeStats,
    FootContactStats,
    JointStopStats,
    JointTorqueStats,
    TrackingStats,
)
from linkage_lab.evaluation.policies import POLICY_LOADERS, Policy, actor_groups, actor_observation
from linkage_lab.evaluation.replay import AnkleReplay
from linkage_lab.paths import REPO_ROOT

#: Version of the ``eval.json`` layout.
SCHEMA_VERSION = 1
EVAL_FILE = "eval.json"
#: The command name in the output folder's manifest (:mod:`linkage_lab.outputs`).
EVAL_COMMAND = "eval"
#: How ``joint_torques`` and ``ankle_replay`` were sampled (``sampling`` in ``eval.json``).
SAMPLING = probe_module.SAMPLING
SAMPLING_NOTE = (
    "each physics substep's torques (decimation per control step); the ankle replay uses the linkage "
    "actuator's commanded torque (computed_effort, before motor limits) at the pose the actuator "
    "computed it from"
)


@dataclass(frozen=True)
class EvalRequest:
    """What to evaluate.

    Attributes:
        task: Registered task id.
        policy: Policy type, a key of :data:`~linkage_lab.evaluation.policies.POLICY_LOADERS`.
        checkpoint: rsl-rl checkpoint file (already resolved), for ``policy="checkpoint"``.
        onnx: ONNX file, for ``policy="onnx"``.
        episodes: Completed episodes to collect.
        num_envs: Parallel envs.
        max_steps: Control-step cap; ``None``: enough for ``episodes`` even if none ends early.
        out_dir: Output folder; ``None``: ``<run>/eval`` for a checkpoint, else ``outputs/eval/<task>``.
        overrides: Hydra overrides for the task.
        device: Device; ``None`` picks one.
        progress: Show a progress bar.
        force: Replace a previous eval output in ``out_dir`` (never a folder eval did not write).
        options: Extra options passed on to the policy loader (as attributes of its ``args``).
        on_step: Called with the env after every control step (e.g. a
            :class:`~linkage_lab.evaluation.video.RolloutRecorder`); ``None``: nothing.
        seed: The env's seed (commands, pushes, randomisation), so an evaluation repeats exactly;
            an ``env.seed=`` override wins.
    """

    task: str
    policy: str = "checkpoint"
    checkpoint: Path | None = None
    onnx: Path | None = None
    episodes: int = 10
    num_envs: int = 8
    max_steps: int | None = None
    out_dir: Path | None = None
    overrides: Sequence[str] = ()
    device: str | None = None
    progress: bool = True
    force: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    on_step: Callable[[Any], None] | None = None
    seed: int = 0


def default_out_dir(request: EvalRequest) -> Path:
    """``<run dir>/eval`` for a checkpoint, else ``<repo>/outputs/eval/<task>``."""
    if request.out_dir is not None:
        return Path(request.out_dir)
    if request.policy == "checkpoint" and request.checkpoint is not None:
        return Path(request.checkpoint).resolve().parent / "eval"
    return REPO_ROOT / "outputs" / "eval" / request.task


def default_max_steps(episodes: int, num_envs: int, max_episode_length: int) -> int:
    """Control steps after which ``episodes`` have surely ended: every env runs ``⌈N/M⌉`` full episodes."""
    return math.ceil(episodes / num_envs) * max_episode_length + 1


def evaluate(request: EvalRequest) -> tuple[Path, dict[str, Any]]:
    """Build the env, load the policy, run the bounded loop and write the report folder.

    Returns:
        The output folder and the ``eval.json`` content.

    Raises:
        UnknownTaskError, OverrideError: Bad task id or override.
        PolicyLoadError: The policy cannot be loaded for this task (nothing is written).
        OutputDirError: The output folder must not be written (checked before the env is built).
        OutputWriteError: The output folder could not be written; the report went to a temp folder.
        KeyError: Unknown policy type.
    """
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.outputs import check_output_dir, write_output
    from linkage_lab.runtime import make_env

    if request.policy not in POLICY_LOADERS:
        raise KeyError(f"unknown policy type {request.policy!r}; known: {', '.join(sorted(POLICY_LOADERS))}")
    out_dir = default_out_dir(request)
    check_output_dir(out_dir, EVAL_COMMAND, request.force)

    def seeded(cfg: Any) -> None:
        if not any(token.lstrip("+~").startswith("env.seed=") for token in request.overrides):
            cfg.seed = request.seed

    with make_env(request.task, request.num_envs, request.device, request.overrides, env_cfg_hook=seeded) as (
        env,
        agent_cfg,
    ):
        wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
        args = SimpleNamespace(task=request.task, checkpoint=request.checkpoint, onnx=request.onnx, **request.options)
        policy = POLICY_LOADERS[request.policy](wrapped, agent_cfg, args)
        report, replay = run_evaluation(wrapped, policy, agent_cfg, request)
        seed = env.unwrapped.cfg.seed
    report = {"task": request.task, "overrides": list(request.overrides), "seed": seed, **report}
    write_output(out_dir, EVAL_COMMAND, lambda folder: write_report(folder, report, replay), request.force)
    return out_dir, report


def run_evaluation(
    env: Any, policy: Policy, agent_cfg: Any, request: EvalRequest
) -> tuple[dict[str, Any], AnkleReplay | None]:
    """The bounded loop on an :class:`RslRlVecEnvWrapper`; returns the report (no task yet) and replay."""
    from tqdm import tqdm

    import linkage_lab
    from linkage_lab.evaluation.robot_info import (
        foot_contact_reader,
        joint_effort_limits,
        joint_index,
        policy_joint_names,
        robot_of,
    )
    from linkage_lab.tasks.velocity.faults import fault_counts

    unwrapped = env.unwrapped
    robot = robot_of(env)
    names = policy_joint_names(env)
    columns = joint_index(robot, names)
    max_steps = request.max_steps or default_max_steps(request.episodes, env.num_envs, env.max_episode_length)
    episodes = EpisodeStats(env.num_envs, unwrapped.device)
    tracking = TrackingStats()
    torques = JointTorqueStats(len(names))
    limits = robot.data.joint_pos_limits.torch[:, columns]
    stops = JointStopStats(limits[..., 0], limits[..., 1])
    probe, replay = _substep_probe(env, columns)
    groups = actor_groups(agent_cfg)
    has_command = "base_velocity" in unwrapped.command_manager.active_terms
    feet = foot_contact_reader(env)
    footfalls = None if feet is None else FootContactStats(feet[0], env.num_envs, unwrapped.step_dt)
    start = time.perf_counter()
    steps = 0
    obs = env.get_observations()
    try:
        with (
            torch.inference_mode(),
            tqdm(total=max_steps, unit="step", disable=not request.progress, mininterval=2.0) as bar,
        ):
            while steps < max_steps and episodes.completed < request.episodes:
                actions = policy(actor_observation(obs, groups))
                obs, reward, dones, extras = env.step(actions)
                policy.reset(dones)
                steps += 1
                if request.on_step is not None:
                    request.on_step(env)
                episodes.add(reward, dones, extras.get("time_outs"))
                if has_command:
                    tracking.add(
                        unwrapped.command_manager.get_command("base_velocity"),
                        robot.data.root_lin_vel_b.torch,
                        robot.data.root_ang_vel_b.torch,
                        ~dones.to(torch.bool),
                    )
                if footfalls is not None:
                    footfalls.add(feet[1](), ~dones.to(torch.bool))
                stops.add(robot.data.joint_pos.torch[:, columns], ~dones.to(torch.bool))
                substeps = probe.drain()
                torques.add(substeps.applied_torque_nm, substeps.commanded_torque_nm)
                if replay is not None:
                    replay.add(substeps.ankle_torque_nm, substeps.ankle_pose_rad)
                bar.update(1)
                bar.set_postfix(episodes=f"{episodes.completed}/{request.episodes}", refresh=False)
    finally:
        probe.close()
    summary = episodes.summary(unwrapped.step_dt)
    sampling = {
        "sampling": SAMPLING,
        "sampling_note": SAMPLING_NOTE,
        "physics_steps_per_control_step": int(unwrapped.cfg.decimation),
        "physics_steps": probe.physics_steps,
    }
    report = {
        "schema_version": SCHEMA_VERSION,
        "linkage_lab_version": linkage_lab.__version__,
        "policy": getattr(policy, "description", None) or {"type": request.policy},
        "device": str(unwrapped.device),
        "num_envs": env.num_envs,
        "control_period_s": unwrapped.step_dt,
        "episodes_requested": request.episodes,
        "episodes": summary.pop("episodes"),
        "steps": steps,
        "max_steps": max_steps,
        "stopped_by": "episodes" if episodes.completed >= request.episodes else "step_cap",
        "wall_time_s": time.perf_counter() - start,
        **summary,
        "tracking": tracking.summary() if has_command else None,
        "footfalls": None if footfalls is None else footfalls.summary(),
        "joint_torques": {
            **sampling,
            "samples": torques.samples,
            "joints": torques.summary(names, joint_effort_limits(env, names)),
        },
        # Per joint, the share of control steps spent within a few mrad of an end of its range.
        "joint_stops": stops.summary(names),
        "ankle_replay": None if replay is None else {**sampling, **replay.summary()},
        # What the task's numeric-fault guards replaced during the run (docs/design/numeric_faults.md).
        "faults": fault_counts(env),
        "latency": action_latency(unwrapped),
        "plots": [],
    }
    return report, replay


def action_latency(env: Any) -> dict[str, Any] | None:
    """The joint targets' delay the run used (``target_delay_range_steps``, drawn per env at each reset), in physics
    steps and seconds; ``None`` when the action term has no such setting."""
    manager = getattr(env, "action_manager", None)
    term = manager.get_term("joint_pos") if manager is not None and "joint_pos" in manager.active_terms else None
    steps = getattr(getattr(term, "cfg", None), "target_delay_range_steps", None)
    if steps is None:
        return None
    physics_dt = float(env.physics_dt)
    return {
        "action_delay_range_steps": [int(steps[0]), int(steps[1])],
        "action_delay_range_s": [int(steps[0]) * physics_dt, int(steps[1]) * physics_dt],
        # Isaac Lab's per-term observation lags (control steps), where a term has one.
        "observation_lag_steps": {
            name: [int(getattr(term, "delay_min_lag", 0)), int(term.delay_max_lag)]
            for name, term in vars(env.cfg.observations.policy).items()
            if getattr(term, "delay_max_lag", 0)
        },
    }


def write_report(out_dir: Path, report: dict[str, Any], replay: AnkleReplay | None) -> list[Path]:
    """Write the plots (when there is a replay) and ``eval.json`` into ``out_dir``."""
    from linkage_lab.evaluation.plots import write_replay_plots
    from linkage_lab.io import write_json_atomic

    written = []
    if replay is not None:
        title = f"{report.get('task', '')}: {report['steps']} steps × {report['num_envs']} envs"
        written = write_replay_plots(replay, out_dir, title=title)
        report["plots"] = [p.name for p in written]
    written.append(write_json_atomic(out_dir / EVAL_FILE, report))
    return written


def _substep_probe(env: Any, columns: list[int]) -> tuple[Any, AnkleReplay | None]:
    """The per-substep probe of the policy joints and, for a robot with linkage ankles, the replay."""
    return probe_module.substep_probe(env, columns)

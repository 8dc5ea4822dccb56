"""Run one race of Marvin's sprint with any policy and referee it.

The race runs on the sprint task built on the velocity task the policy was trained on (its
``policy_task``): the scripted gait, ONNX files of the plain task and its checkpoints on
the robot's default sprint task; residual-gait policies on the residual one.

The referee is :class:`~linkage_lab.sprint.rules.SprintTracker` (the rules of docs/design/gait.md §4); the
env's own terminations (fall, lane, finish) only stop the physics. The ankle torques the policy
commands are replayed through the real linkage (:class:`~linkage_lab.evaluation.replay.AnkleReplay`),
the same code ``linkage-lab eval`` uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from linkage_lab.io import save_figure_atomic, write_json_atomic

#: The command name in the output folder's manifest (:mod:`linkage_lab.outputs`).
SPRINT_COMMAND = "sprint"


@dataclass
class RaceRecord:
    """What one race produced."""

    metrics: dict[str, Any]
    path_xy: list[tuple[float, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def _build_policy(spec: str, env: Any, agent_cfg: Any, gait_overrides: dict[str, Any] | None) -> tuple[Any, dict]:
    """``scripted``, a checkpoint (``.pt`` or ``latest``) or an ONNX file."""
    from linkage_lab.evaluation.policies import (
        actor_groups,
        load_checkpoint_policy,
        load_onnx_policy,
        resolve_checkpoint,
    )

    if spec == "scripted":
        from linkage_lab.evaluation.robot_info import robot_name
        from linkage_lab.gait.policy import ScriptedPolicy, describe
        from linkage_lab.robots.registry import get_robot

        gait = get_robot(robot_name(env)).require("sprint_gait")(**(gait_overrides or {}))
        return ScriptedPolicy(env, gait), {"policy": "scripted", **describe(gait)}
    if spec.endswith(".onnx"):
        obs_dim = env.unwrapped.observation_manager.group_obs_dim["policy"][0]
        action_dim = env.unwrapped.action_manager.total_action_dim
        policy = load_onnx_policy(Path(spec), obs_dim, action_dim)
        return policy, {"policy": "onnx", "path": str(Path(spec).resolve())}
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    path = resolve_checkpoint(spec, policy_task_of(race_task(spec)), agent_cfg.experiment_name)
    # rsl-rl's runner reads the env through its wrapper; the race itself steps the bare env.
    wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
    policy = load_checkpoint_policy(path, wrapped, agent_cfg, task=None)
    return policy, {"policy": "checkpoint", "path": str(path), "actor_groups": actor_groups(agent_cfg)}


def policy_task_of(sprint_task: str) -> str:
    """The velocity task whose policies race on ``sprint_task`` (its registration's ``policy_task``)."""
    import gymnasium as gym

    from linkage_lab.tasks.registry import register_tasks

    register_tasks()

    return gym.spec(sprint_task).kwargs.get("policy_task", sprint_task)


def race_export_overrides(policy_task: str) -> list[str]:
    """Overrides that make an export of ``policy_task`` the bundle its race runs on the robot.

    A residual race may step the gait prior at a cadence of its own (``frequency_hz`` of the sprint
    task's action term), which ``gait.onnx`` holds: exporting with these overrides writes that gait.
    Empty when no sprint task races ``policy_task`` or its race keeps the task's gait.
    """
    from linkage_lab.runtime import resolve_configs
    from linkage_lab.tasks.sprint import sprint_tasks

    for sprint_task in sprint_tasks():
        if policy_task_of(sprint_task) != policy_task:
            continue
        env_cfg, _ = resolve_configs(sprint_task, [], "cpu")
        return [
            f"env.actions.{name}.frequency_hz={term.frequency_hz}"
            for name, term in vars(env_cfg.actions).items()
            if getattr(term, "frequency_hz", None) is not None
        ]
    return []


def race_task(policy_spec: str) -> str:
    """The sprint task a policy races on: the one built on the velocity task it was trained on.

    ``scripted``, ONNX files and ``latest`` race on :func:`default_task`; ``pretrained`` on the first
    of the registered sprint tasks whose velocity task ships a policy; a checkpoint file on the sprint
    of the task its run (``run.json``) or shipped folder (``train.json``) names, else :func:`default_task`.

    Raises:
        PolicyLoadError: ``pretrained`` while no sprint's velocity task ships a policy.
    """
    import json

    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.pretrained import PRETRAINED, shipped_tasks
    from linkage_lab.tasks.sprint import sprint_tasks

    if policy_spec == PRETRAINED:
        shipped = shipped_tasks()
        for task in sprint_tasks():
            if policy_task_of(task) in shipped:
                return task
        wanted = ", ".join(policy_task_of(t) for t in sprint_tasks())
        raise PolicyLoadError(f"no pretrained policy for the sprint: none is shipped for {wanted}")
    path = Path(policy_spec)
    if policy_spec == "scripted" or path.suffix == ".onnx" or not path.is_file():
        return default_task()
    for record in (path.parent / "run.json", path.parent / "train.json"):
        try:
            trained = json.loads(record.read_text()).get("task")
        except (OSError, ValueError, AttributeError):
            continue
        for task in sprint_tasks():
            if trained == policy_task_of(task):
                return task
    return default_task()


def sprint_rules(sprint_task: str) -> Any:
    """The rules of a sprint task: its ``sprint_rules_entry_point`` (``module:function``) called."""
    import importlib

    import gymnasium as gym

    from linkage_lab.tasks.registry import register_tasks

    register_tasks()

    entry = gym.spec(sprint_task).kwargs.get("sprint_rules_entry_point")
    if entry is None:
        raise ValueError(f"task {sprint_task!r} names no sprint_rules_entry_point: it is not a sprint")
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)()


def default_task() -> str:
    """The sprint task scripted and ONNX policies race on (``DEFAULT_SPRINT_TASK`` of the one robot
    with a sprint; an error when several robots have one)."""
    from linkage_lab.tasks.sprint import default_sprint_tasks

    defaults = default_sprint_tasks()
    if len(defaults) != 1:
        raise ValueError(f"several robots have a sprint ({', '.join(defaults)}): name the sprint task")
    return defaults[0]


def run_race(
    policy_spec: str = "scripted",
    ankle: str = "box",
    device: str | None = None,
    gait_overrides: dict[str, Any] | None = None,
    progress: bool = True,
    on_step: Callable[[Any], None] | None = None,
    env_overrides: Sequence[str] = (),
) -> RaceRecord:
    """Run one race headless and return its metrics (docs/design/gait.md §4) plus the ankle replay summary.

    ``on_step`` (e.g. a :class:`~linkage_lab.evaluation.video.RolloutRecorder`) is called with the env
    after every control step that did not end the race (the env resets the robot on the step that does).
    ``env_overrides`` are hydra overrides of the race's env (e.g. the action term a policy was trained with),
    applied after the ankle's preset.
    """
    from tqdm import tqdm

    from linkage_lab.evaluation.policies import actor_groups, actor_observation
    from linkage_lab.evaluation.probe import SAMPLING, substep_probe
    from linkage_lab.runtime import make_env
    from linkage_lab.sprint.rules import SprintTracker

    task = race_task(policy_spec)
    rules = sprint_rules(task)
    overrides = [f"presets={ankle}", *env_overrides]
    with make_env(task, num_envs=1, device=device, overrides=overrides) as (env, agent_cfg):
        unwrapped = env.unwrapped
        policy, info = _build_policy(policy_spec, env, agent_cfg, gait_overrides)
        groups = actor_groups(agent_cfg) if info["policy"] == "checkpoint" else ["policy"]
        # Every physics substep's commanded ankle torque, through the geometry the actuators use.
        probe, replay = substep_probe(env, [])
        tracker = SprintTracker(1, rules, device=unwrapped.device)
        robot = unwrapped.scene["robot"]
        obs, _ = env.reset()
        # The referee's start is the spawn pose, at time 0 (the clock starts with the simulation).
        tracker.update(0.0, robot.data.root_pos_w.torch - unwrapped.scene.env_origins)
        path: list[tuple[float, float]] = []
        max_steps = int(round(rules.time_limit_s / unwrapped.step_dt)) + 1
        with torch.inference_mode():
            # The bar's total is the 90 s limit; the distance shows how far the race really is.
            bar = tqdm(range(max_steps), desc="sprint", unit="step", disable=not progress, mininterval=2.0)
            for step in bar:
                actions = policy(actor_observation(obs, groups))
                before = robot.data.root_pos_w.torch - unwrapped.scene.env_origins
                obs, _, terminated, truncated, _ = env.step(actions)
                time_s = round((step + 1) * unwrapped.step_dt, 9)  # no 19.580000000000002 in the metrics
                substeps = probe.drain()
                replay.add(substeps.ankle_torque_nm, substeps.ankle_pose_rad, step)
                if terminated.any() or truncated.any():
                    # The env has stopped the physics and reset the robot, so the post-step pose is
                    # gone: the referee gets the pose its terms say it reached (see stopped_pose).
                    terms = unwrapped.termination_manager
                    fired = [name for name in terms.active_terms if bool(terms.get_term(name)[0])]
                    pos = stopped_pose(before, fired, tracker.start_xy[0], rules)
                else:
                    pos = robot.data.root_pos_w.torch - unwrapped.scene.env_origins
                    if on_step is not None:
                        on_step(env)
                path.append((float(pos[0, 0]), float(pos[0, 1])))
                if progress and step % 25 == 0:
                    bar.set_postfix(distance_m=f"{float(tracker.distance_m[0]):.2f}", refresh=False)
                if tracker.update(time_s, pos).all() or terminated.any() or truncated.any():
                    break
            if not tracker.done.all():
                # Only the env's own time-out stopped the run: that is the rules' time limit.
                tracker.update(max(time_s, rules.time_limit_s), pos)
        probe.close()
        metrics = tracker.metrics(0)
        decimation = int(unwrapped.cfg.decimation)
    metrics["ankle_replay"] = {"sampling": SAMPLING, "physics_steps_per_control_step": decimation, **replay.summary()}
    info.update(ankle=ankle, task=task, fall_height_m=rules.fall_height_m, control_period_s=unwrapped.step_dt)
    return RaceRecord(metrics, path, info)


def stopped_pose(last_pos: torch.Tensor, fired: list[str], start_xy: torch.Tensor, rules: Any) -> torch.Tensor:
    """The torso pose the referee gets for a step after which the env stopped the physics.

    The env's terminations mirror the rules (its finish line, lane and fall height are the
    referee's), but the env resets the robot in the same step, so the pose that tripped them is
    never seen. This puts the torso on the line it crossed, so the referee records the same event:
    ``finished`` → on the finish line; ``left_track`` → just outside the lane; ``fell`` or
    ``base_contact`` → below the fall height. ``last_pos`` (the pose before the step) fills the rest.

    Args:
        last_pos: Torso position before the step, ``(1, 3)`` (m).
        fired: Names of the env termination terms that fired.
        start_xy: The referee's start ``(x, y)`` (m).
        rules: The race's :class:`~linkage_lab.sprint.rules.SprintCfg`.
    """
    pos = last_pos.clone().to(torch.float64)
    start = start_xy.to(pos)
    if "finished" in fired:
        pos[0, 0] = start[0] + rules.track_length_m
    if "left_track" in fired:
        side = 1.0 if float(pos[0, 1]) >= float(start[1]) else -1.0
        pos[0, 1] = start[1] + side * (rules.lane_half_width_m + 1e-6)
    if "fell" in fired or "base_contact" in fired:
        pos[0, 2] = rules.fall_height_m - 1.0
    return pos


def plot_path(record: RaceRecord, path: Path, lane_half_width_m: float = 0.5, track_length_m: float = 10.0) -> Path:
    """The torso path (x, y) over the lane, start and finish lines; PNG."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3))
    ax = fig.add_subplot(1, 1, 1)
    xs = [p[0] for p in record.path_xy]
    ys = [p[1] for p in record.path_xy]
    start_x = xs[0] if xs else 0.0
    ax.axhspan(-lane_half_width_m, lane_half_width_m, color="0.92", label="lane")
    ax.axvline(start_x, color="green", lw=1, label="start")
    ax.axvline(start_x + track_length_m, color="red", lw=1, label="finish")
    ax.plot(xs, ys, color="C0", lw=1.5, label="torso path")
    m = record.metrics
    ax.set_title(
        f"{record.info.get('policy')} / {record.info.get('ankle')} ankles: {m['ended_reason']} after "
        f"{m['duration_s']:.1f} s, {m['distance_m']:.2f} m, {m['average_speed_mps']:.2f} m/s"
    )
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_xlim(start_x - 0.5, start_x + track_length_m + 0.5)
    ax.set_ylim(-1.0, 1.0)
    ax.legend(loc="upper right", fontsize=8)
    return save_figure_atomic(fig, path)


def write_race(record: RaceRecord, out_dir: Path, force: bool = False) -> dict[str, Path]:
    """Write ``metrics.json``, ``race.json`` (policy and gait details) and ``path.png`` into ``out_dir``.

    The folder is assembled beside ``out_dir`` and renamed into place, so a failed write leaves
    nothing half-written (:func:`~linkage_lab.outputs.write_output`).

    Args:
        record: The race.
        out_dir: Output folder; new, empty, or a previous sprint output (replaced only with ``force``).
        force: Replace a previous sprint output.

    Raises:
        OutputWriteError: ``out_dir`` could not be written; the race was written to a temp folder,
            which the message names, so a finished race is never lost.
    """
    from linkage_lab.outputs import write_output

    def write(folder: Path) -> Path:
        write_json_atomic(folder / "metrics.json", record.metrics)
        write_json_atomic(folder / "race.json", record.info)
        plot_path(record, folder / "path.png")
        return folder

    out_dir = Path(out_dir)
    write_output(out_dir, SPRINT_COMMAND, write, force)
    return {name: out_dir / name for name in ("metrics.json", "race.json", "path.png")}

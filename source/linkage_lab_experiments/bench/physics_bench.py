"""The distance to the physics: a task's env throughput against plain MuJoCo on the same robot.

``linkage-lab bench physics --task T`` measures, in one run, the task's env-steps/s (zero actions,
a fresh process, :mod:`linkage_lab_experiments.bench.env_worker`) and the same generated description stepped by
plain MuJoCo through ``mujoco.rollout`` on 1 and 2 threads: the task's physics step and substeps per
env step, its joint armature, joint-space position servos with the task's stiffness and damping
(the linkage actuator's motor-space PD is coupled; a servo per joint costs the same), the same
collision shapes (the description's base box and feet) on a floor, from the task's standing pose,
MuJoCo's default solver. The ratio task / plain MuJoCo is how much of an env step is the contact
dynamics of this robot, and how much the stack around it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.runtime import resolve_configs
from linkage_lab_experiments.bench.env_bench import run_worker


@dataclass(frozen=True)
class PlainModelSpec:
    """What the plain MuJoCo model takes from the task's config.

    Attributes:
        urdf: The robot's generated URDF.
        timestep_s: The physics step of one MuJoCo step (the task's ``sim.dt`` / substeps).
        steps_per_env_step: MuJoCo steps per env step (decimation × substeps).
        base_height_m: Spawn height of the base.
        joint_pos_rad: Standing pose (and servo target) per joint name.
        stiffness: Servo stiffness per joint name (N·m/rad).
        damping: Servo damping per joint name (N·m·s/rad).
        armature: Joint armature per joint name (kg·m²).
    """

    urdf: Path
    timestep_s: float
    steps_per_env_step: int
    base_height_m: float
    joint_pos_rad: dict[str, float]
    stiffness: dict[str, float]
    damping: dict[str, float]
    armature: dict[str, float]


def spec_from_env_cfg(env_cfg: Any) -> PlainModelSpec:
    """A :class:`PlainModelSpec` from a resolved task env config (Newton physics)."""
    robot = env_cfg.scene.robot
    urdf = Path(robot.spawn.usd_path).with_suffix(".urdf")
    names = _urdf_joint_names(urdf)
    substeps = int(getattr(env_cfg.sim.physics, "num_substeps", 1) or 1)
    stiffness: dict[str, float] = {}
    damping: dict[str, float] = {}
    armature: dict[str, float] = {}
    for actuator in robot.actuators.values():
        members = [n for n in names if any(re.fullmatch(e, n) for e in actuator.joint_names_expr)]
        for name in members:
            stiffness[name] = _per_joint(actuator.stiffness, name)
            damping[name] = _per_joint(actuator.damping, name)
            armature[name] = _per_joint(getattr(actuator, "armature", None), name)
    return PlainModelSpec(
        urdf=urdf,
        timestep_s=float(env_cfg.sim.dt) / substeps,
        steps_per_env_step=int(env_cfg.decimation) * substeps,
        base_height_m=float(robot.init_state.pos[2]),
        joint_pos_rad={n: _per_joint(robot.init_state.joint_pos, n) for n in names},
        stiffness=stiffness,
        damping=damping,
        armature=armature,
    )


def build_plain_model(spec: PlainModelSpec) -> Any:
    """The description as a free-floating MuJoCo model with a floor and a position servo per joint."""
    import mujoco

    model_spec = mujoco.MjSpec.from_string(spec.urdf.read_text())  # collision shapes only
    model_spec.option.timestep = spec.timestep_s
    model_spec.worldbody.bodies[0].add_freejoint()
    model_spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    for joint in model_spec.joints:
        if joint.type != mujoco.mjtJoint.mjJNT_HINGE:
            continue
        joint.armature = spec.armature.get(joint.name, 0.0)
        actuator = model_spec.add_actuator(name=joint.name, target=joint.name)
        actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
        actuator.set_to_position(kp=spec.stiffness.get(joint.name, 0.0), kv=spec.damping.get(joint.name, 0.0))
    return model_spec.compile()


def initial_state(model: Any, spec: PlainModelSpec) -> tuple[np.ndarray, np.ndarray]:
    """The standing state (MuJoCo's full physics state) and the servo targets holding it."""
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[2] = spec.base_height_m
    targets = np.zeros(model.nu)
    for i in range(model.nu):
        joint = model.actuator_trnid[i, 0]
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        data.qpos[model.jnt_qposadr[joint]] = targets[i] = spec.joint_pos_rad.get(name, 0.0)
    mujoco.mj_forward(model, data)
    state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    return state, targets


def plain_mujoco_throughput(spec: PlainModelSpec, num_envs: int, env_steps: int, threads: int) -> dict[str, Any]:
    """Env-steps/s of ``num_envs`` copies of the plain model rolled out on ``threads`` threads (warm)."""
    import mujoco
    from mujoco import rollout

    model = build_plain_model(spec)
    state, targets = initial_state(model, spec)
    nstep = env_steps * spec.steps_per_env_step
    states = np.tile(state, (num_envs, 1))
    control = np.tile(targets, (num_envs, nstep, 1))
    datas = [mujoco.MjData(model) for _ in range(threads)]
    rollout.rollout(model, datas, states, control[:, : spec.steps_per_env_step], nstep=spec.steps_per_env_step)
    start = time.perf_counter()
    final, _ = rollout.rollout(model, datas, states, control, nstep=nstep)
    elapsed = time.perf_counter() - start
    base_height = final[:, -1, 1 + 2]  # the state starts with time, then qpos
    return {
        "threads": threads,
        "num_envs": num_envs,
        "env_steps": env_steps,
        "seconds": elapsed,
        "env_steps_per_s": num_envs * env_steps / elapsed,
        "final_base_height_m": {"min": float(base_height.min()), "max": float(base_height.max())},
    }


def _urdf_joint_names(urdf: Path) -> list[str]:
    import xml.etree.ElementTree as ET

    root = ET.parse(urdf).getroot()
    return [j.get("name") for j in root.iter("joint") if j.get("type") in {"revolute", "continuous"}]


def _per_joint(value: Any, name: str) -> float:
    """A config value that is a number, or a dict of name patterns to numbers, for joint ``name``."""
    if value is None:
        return 0.0
    if isinstance(value, dict):
        for pattern, v in value.items():
            if re.fullmatch(pattern, name):
                return float(v)
        return 0.0
    return float(value)


def compare(
    task: str, num_envs_list: list[int], env_steps: int = 200, warmup: int = 30, threads: tuple[int, ...] = (1, 2)
) -> list[dict[str, Any]]:
    """Per env count: the task's env-steps/s (fresh process) and plain MuJoCo's on each thread count.

    Measured one after the other in this run; the ratio ``task / plain`` is the share of plain
    MuJoCo's speed the task reaches.
    """

    env_cfg, _ = resolve_configs(task, [], "cpu")
    spec = spec_from_env_cfg(env_cfg)
    rows = []
    for num_envs in num_envs_list:
        measured = run_worker(task, num_envs, env_steps, warmup, [])
        plain = [plain_mujoco_throughput(spec, num_envs, env_steps, n) for n in threads]
        rows.append(
            {
                "task": task,
                "num_envs": num_envs,
                "task_env_steps_per_s": measured["env_steps_per_s"],
                "plain_mujoco": plain,
                "task_over_plain": {
                    str(p["threads"]): measured["env_steps_per_s"] / p["env_steps_per_s"] for p in plain
                },
            }
        )
    return rows


def format_comparison(rows: list[dict[str, Any]], spec_note: str = "") -> str:
    """The comparison as a table for people."""
    threads = [p["threads"] for p in rows[0]["plain_mujoco"]] if rows else []
    head = f"{'envs':>6} {'task env-steps/s':>17}" + "".join(
        f" {f'MuJoCo {n} thr':>13} {f'task/MuJoCo {n}':>14}" for n in threads
    )
    lines = [head]
    for row in rows:
        line = f"{row['num_envs']:>6} {row['task_env_steps_per_s']:>17.0f}"
        for plain in row["plain_mujoco"]:
            ratio = row["task_over_plain"][str(plain["threads"])]
            line += f" {plain['env_steps_per_s']:>13.0f} {ratio:>13.1%} "
        lines.append(line)
    if spec_note:
        lines.append(spec_note)
    return "\n".join(lines)

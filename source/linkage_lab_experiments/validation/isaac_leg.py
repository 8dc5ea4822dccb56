"""The S3N chirp on one leg of a robot's task in Isaac Lab (base fixed) vs the standalone serial leg and the oracle.

The robot provides, through its registry extras, its leg task and physics step (``leg_task``), the
task's drive of one leg (``task_leg_drive_cfg``), the leg's joint names (``leg_joint_names``) and its
leg body (``leg_body``, the one the task's actuator takes its link inertia from).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3N_MODELS
from linkage_lab_experiments.analysis import pick_robot
from linkage_lab_experiments.analysis.fidelity import FidelityCfg, chirp_targets
from linkage_lab_experiments.analysis.leg_run import LegRun
from linkage_lab_experiments.validation.standalone_leg import run_oracle_leg, run_standalone_leg

#: The registry extra that marks a robot with a leg these experiments can drive.
LEG_CAPABILITY = "task_leg_drive_cfg"


def leg_task(robot: str | None = None) -> tuple[str, float]:
    """``(task, physics step s)`` of ``robot``'s leg experiments (``None``: the only robot with a leg task)."""
    from linkage_lab.robots.registry import get_robot

    return get_robot(pick_robot(LEG_CAPABILITY, robot)).extra("leg_task")()


@dataclass(frozen=True)
class IsaacConsistencyCfg:
    """Settings of the Isaac-vs-standalone comparison."""

    models: tuple[str, ...] = S3N_MODELS
    """Leg models to run (``presets=`` of the task)."""
    duration_s: float = 4.0
    """Length of the linear chirp (s). Short: the Isaac run costs ~10 ms per physics step on a CPU."""
    chirp_amplitude_rad: float = 0.2
    """Chirp amplitude on the hip and the knee (rad), the paper's."""
    chirp_band_hz: tuple[float, float] = (0.1, 10.0)
    """Start and end frequency (Hz). The paper sweeps to 25 Hz at a 3 ms step; at the task's 5 ms
    step 10 Hz still gets 20 samples per cycle and keeps the target speed (≤ 12.6 rad/s) near the
    joints' 10 rad/s rating."""
    robot: str | None = None
    """The robot (its registry extras); ``None``: the only robot with a leg task."""
    leg: str | None = None
    """The driven leg; the others stay at the standing pose under their own PD. ``None``: the robot's default."""
    base_height_m: float = 0.5
    """Height of the fixed base (m): the feet hang ~0.2 m below it, clear of the ground."""
    task: str | None = None
    """Task whose articulation (URDF-generated links, the linkage actuator) is driven; ``None``: the robot's."""
    device: str | None = None
    """Simulation device; ``None`` picks one (:func:`linkage_lab.runtime.pick_device`)."""
    tolerance_ratio: float = 0.25
    """Pass: per joint, the Isaac-vs-standalone position and torque RMSE are at most this × the
    smallest model-vs-oracle RMSE among the models run (see :func:`run_isaac_consistency`)."""
    motor_coupling: str | None = "full"
    """How the chirp's motor-space PD applies the mapped gains' cross terms in all three (Isaac Lab, standalone,
    oracle; :attr:`LinkageDriveCfg.motor_coupling`). ``full``, the protocol's: what is validated is the leg's
    dynamics model. Under the Limit drivers' own gains (``diagonal``, its task's: the hip stiffened to
    ``k_h + 2 k_k``) this 10 Hz chirp put s3n_act's Isaac Lab and standalone legs 10.8 N·m apart on the hip and
    further from the oracle than kin_only (knee 1.46e-2 against 4.8e-3 rad; docs/results/2026-12-06_held_coupling.md).
    ``None``: the task's own."""


def task_drive_cfg(model: str, physics_dt_s: float | None = None, robot: str | None = None) -> LinkageDriveCfg:
    """The drive config of one leg of ``robot`` under ``model``, as the task's actuator builds it.

    Args:
        model: ``kin_only``, ``s3n_act`` or ``s3n_full``.
        physics_dt_s: The physics step the S3N terms difference over (s); ``None``: the task's.
        robot: ``None``: the only robot with a leg task.
    """
    from linkage_lab.robots.registry import get_robot

    return get_robot(pick_robot(LEG_CAPABILITY, robot)).extra("task_leg_drive_cfg")(model, physics_dt_s)


def _fixed_base_hook(cfg: IsaacConsistencyCfg, record: dict) -> Callable:
    """An ``env_cfg_hook``: base fixed in the air, no events that move or reload the robot."""

    def hook(env_cfg) -> None:
        robot = env_cfg.scene.robot
        robot.spawn.fix_root_link = True
        x, y, _ = robot.init_state.pos
        robot.init_state.pos = (x, y, cfg.base_height_m)
        for term in ("push_robot", "reset_base", "add_base_mass", "base_com", "base_external_force_torque"):
            if hasattr(env_cfg.events, term):
                setattr(env_cfg.events, term, None)
        if cfg.motor_coupling is not None:
            for actuator in robot.actuators.values():
                if hasattr(actuator, "motor_coupling"):
                    actuator.motor_coupling = cfg.motor_coupling
        record["num_substeps"] = getattr(env_cfg.sim.physics, "num_substeps", None)

    return hook


def run_isaac_leg(
    model: str,
    joint_targets: np.ndarray,
    cfg: IsaacConsistencyCfg,
    expected_drive: LinkageDriveCfg | None = None,
) -> LegRun:
    """The chirp on ``cfg.leg`` of ``cfg.task`` under ``presets=model``, targets set every physics step.

    The action manager (policy rate) is bypassed: per physics step the leg's targets go into the
    articulation's command, then ``write_data_to_sim`` (the actuator runs) → ``sim.step`` → ``scene.update``.
    The base is fixed in the air; the other joints hold the standing pose under their own PD.

    Raises:
        RuntimeError: The task's actuator runs a different drive config than ``expected_drive``.
    """
    from linkage_lab.actuators.linkage_actuator import drive_cfg
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.runtime import make_env

    spec = get_robot(pick_robot(LEG_CAPABILITY, cfg.robot))
    task = cfg.task or spec.extra("leg_task")()[0]
    hip_name, knee_name, ankle_name = spec.extra("leg_joint_names")(cfg.leg)
    info: dict = {}
    hook = _fixed_base_hook(cfg, info)
    overrides = [f"presets={model}"]
    context = make_env(task, num_envs=1, device=cfg.device, overrides=overrides, env_cfg_hook=hook)
    with context as (env, _):
        sim_env = env.unwrapped
        env.reset()
        robot, dt = sim_env.scene["robot"], float(sim_env.physics_dt)
        actuator = robot.actuators["legs"]
        names = [hip_name, knee_name]
        columns = [robot.joint_names.index(name) for name in names]
        group = [actuator.joint_names.index(name) for name in names]
        ankle = robot.joint_names.index(ankle_name)
        live = drive_cfg(actuator.cfg, actuator.stiffness[0, group].tolist(), actuator.damping[0, group].tolist())
        if expected_drive is not None and not same_drive(live, expected_drive):
            raise RuntimeError(f"the task's {model} drive differs from the expected one:\n{live}\n{expected_drive}")
        info.update(
            physics_dt_s=dt,
            armature_kgm2=robot.data.joint_armature.torch[0, columns].tolist(),
            motor_damping_nms_per_rad=robot.data.joint_viscous_friction_coeff.torch[0, columns].tolist(),
        )
        pose = robot.data.default_joint_pos.torch.clone()
        pose[:, columns] = torch.as_tensor(joint_targets[0], dtype=pose.dtype, device=pose.device)
        robot.write_joint_state_to_sim_index(position=pose, velocity=torch.zeros_like(pose))
        robot.reset()
        standing_ankle = float(pose[0, ankle])
        targets = torch.as_tensor(joint_targets, dtype=pose.dtype, device=pose.device)
        log = {"q": [], "tau": [], "act": [], "ankle": [], "speed": []}
        for step in range(len(targets)):
            command = pose.clone()
            command[0, columns] = targets[step]
            robot.actuators.target_command.set_position_index(value=command, full_data=True)
            joint_pos = robot.data.joint_pos.torch[0]
            log["q"].append(joint_pos[columns].clone())
            log["ankle"].append(joint_pos[ankle].clone())
            log["speed"].append(robot.data.joint_vel.torch[0, columns].abs().max())
            sim_env.scene.write_data_to_sim()
            log["tau"].append(actuator.applied_effort[0, group].clone())
            log["act"].append(actuator.computed_effort[0, group].clone())
            sim_env.sim.step(render=False)
            sim_env.scene.update(dt=dt)
    arrays = {key: torch.stack(values).double().cpu().numpy() for key, values in log.items()}
    info.update(
        max_ankle_deviation_rad=float(np.abs(arrays["ankle"] - standing_ankle).max()),
        max_joint_speed_rads=float(arrays["speed"].max()),
    )
    return LegRun(joint_pos=arrays["q"], joint_torque=arrays["tau"], actuator_torque=arrays["act"], info=info)


def _rmse(a: np.ndarray, b: np.ndarray) -> list[float]:
    return np.sqrt(np.mean((a - b) ** 2, axis=0)).tolist()


def _pair(a: LegRun, b: LegRun, torque: str) -> dict:
    """Per-joint ``(hip, knee)`` position and torque RMSE of ``a`` against ``b``."""
    return {
        "pos_rmse": _rmse(a.joint_pos, b.joint_pos),
        "tau_rmse": _rmse(getattr(a, torque), getattr(b, torque)),
    }


def run_isaac_consistency(
    models: Sequence[str] | None = None,
    duration_s: float | None = None,
    cfg: IsaacConsistencyCfg | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Run the chirp in Isaac Lab and on the standalone leg per model, plus the oracle; compare.

    Isaac vs standalone compares the total applied joint torque (what each simulator integrates);
    each against the oracle compares ``Jᵀ τ_m*`` (the motors' torque, what hardware would measure).

    Pass, per model and joint: the Isaac-vs-standalone position and torque RMSE are at most
    ``tolerance_ratio`` times the smallest model-vs-oracle RMSE of that joint among the models run,
    so the implementations differ by less than the finest modelling error the benchmark resolves
    (and far less than Kin-Only's, the error S3N removes). Because an RMSE is a norm, the two
    implementations then rank any two models whose oracle errors are further apart than their own
    differences in the same order; the ranks are checked on those pairs (closer pairs are ties).

    Args:
        models: Overrides ``cfg.models``.
        duration_s: Overrides ``cfg.duration_s`` (s).
        cfg: Settings; ``None``: the defaults.
        progress: Called with a label after each simulation run.

    Returns:
        ``{"settings", "body", "tolerance", "models": {model: {...}}, "oracle_order", "passed"}``, JSON-ready.
    """
    from linkage_lab.robots.registry import get_robot

    cfg = cfg or IsaacConsistencyCfg()
    robot = pick_robot(LEG_CAPABILITY, cfg.robot)
    spec = get_robot(robot)
    task, dt = spec.extra("leg_task")()
    cfg = replace(
        cfg,
        robot=robot,
        task=cfg.task or task,
        models=tuple(models or cfg.models),
        duration_s=duration_s or cfg.duration_s,
    )
    report = progress or (lambda label: None)
    standing = task_drive_cfg("kin_only", dt, robot).reference_joint_pos_rad
    _, targets = chirp_targets(
        FidelityCfg(
            duration_s=cfg.duration_s,
            timestep_s=dt,
            chirp_amplitude_rad=cfg.chirp_amplitude_rad,
            chirp_band_hz=tuple(cfg.chirp_band_hz),
            operating_pose_rad=tuple(standing),
        )
    )

    def drive(model: str) -> LinkageDriveCfg:
        task_drive = task_drive_cfg(model, dt, robot)
        return task_drive if cfg.motor_coupling is None else replace(task_drive, motor_coupling=cfg.motor_coupling)

    isaac_runs = {}
    for model in cfg.models:
        isaac_runs[model] = run_isaac_leg(model, targets, cfg, drive(model))
        if abs(isaac_runs[model].info["physics_dt_s"] - dt) > 1e-12:
            raise RuntimeError(f"the task's physics step is {isaac_runs[model].info['physics_dt_s']} s, not {dt}")
        report(f"isaac {model}")
    body = spec.extra("leg_body")(cfg.leg)
    oracle = run_oracle_leg(drive("kin_only"), body, targets, dt)
    report("oracle")
    results = {}
    for model in cfg.models:
        standalone = run_standalone_leg(drive(model), body, targets, dt)
        isaac = isaac_runs[model]
        results[model] = {
            "isaac_vs_standalone": _pair(isaac, standalone, "joint_torque"),
            "isaac_vs_oracle": _pair(isaac, oracle, "actuator_torque"),
            "standalone_vs_oracle": _pair(standalone, oracle, "actuator_torque"),
            "isaac": isaac.info,
        }
        report(f"standalone {model}")
    summary = _judge(cfg, results)
    summary["settings"] = {
        "robot": robot,
        "task": cfg.task,
        "joints": list(spec.extra("leg_joint_names")(cfg.leg)[:2]),
        "duration_s": cfg.duration_s,
        "chirp_band_hz": list(cfg.chirp_band_hz),
        "chirp_amplitude_rad": cfg.chirp_amplitude_rad,
        "physics_dt_s": dt,
        "tolerance_ratio": cfg.tolerance_ratio,
    }
    summary["body"] = {
        "serial_link_kgm2": list(body.serial_link_kgm2()),
        "lower_link_com_m": body.shank.com_m,
    }
    return summary


def _judge(cfg: IsaacConsistencyCfg, results: dict) -> dict:
    """Per-model pass/fail against the tolerance, and the oracle ranking of both implementations."""
    tolerance = {
        key: [cfg.tolerance_ratio * min(values) for values in zip(*per_model, strict=True)]
        for key, per_model in (
            (key, [entry["standalone_vs_oracle"][key] for entry in results.values()])
            for key in ("pos_rmse", "tau_rmse")
        )
    }
    for entry in results.values():
        pair = entry["isaac_vs_standalone"]
        entry["pass"] = all(
            error <= bound for key in tolerance for error, bound in zip(pair[key], tolerance[key], strict=True)
        )

    def error(model: str, key: str) -> float:
        return float(np.mean(results[model][key]["pos_rmse"]))

    order = {
        side: sorted(results, key=lambda model, side=side: error(model, f"{side}_vs_oracle"))
        for side in ("isaac", "standalone")
    }
    resolved_agree = True
    for a in results:
        for b in results:
            margin = error(a, "isaac_vs_standalone") + error(b, "isaac_vs_standalone")
            if error(b, "standalone_vs_oracle") - error(a, "standalone_vs_oracle") > margin:
                resolved_agree &= error(b, "isaac_vs_oracle") > error(a, "isaac_vs_oracle")
    order["agrees"] = order["isaac"] == order["standalone"]
    order["resolved_pairs_agree"] = bool(resolved_agree)
    passed = all(entry["pass"] for entry in results.values()) and resolved_agree
    return {"tolerance": tolerance, "models": results, "oracle_order": order, "passed": bool(passed)}


def format_report(result: dict) -> str:
    """A plain-text table of :func:`run_isaac_consistency`'s result."""
    settings, tolerance = result["settings"], result["tolerance"]
    lines = [
        f"S3N in Isaac Lab vs the standalone serial leg: {settings['task']}, joints {', '.join(settings['joints'])}, "
        f"base fixed; chirp {settings['chirp_amplitude_rad']} rad, {settings['chirp_band_hz'][0]}-"
        f"{settings['chirp_band_hz'][1]} Hz over {settings['duration_s']:g} s, "
        f"targets every {settings['physics_dt_s'] * 1e3:g} ms physics step",
        "{:10s} {:>23s} {:>23s} {:>23s} {:>23s}  {}".format(
            "model",
            "Isaac-standalone pos",
            "tau (hip, knee)",
            "Isaac-oracle pos",
            "standalone-oracle pos",
            "result",
        ),
    ]
    for model, entry in result["models"].items():
        cells = [
            entry["isaac_vs_standalone"]["pos_rmse"],
            entry["isaac_vs_standalone"]["tau_rmse"],
            entry["isaac_vs_oracle"]["pos_rmse"],
            entry["standalone_vs_oracle"]["pos_rmse"],
        ]
        text = " ".join(
            f"{a:9.2e} {b:9.2e} {unit}" for (a, b), unit in zip(cells, ("rad", "N·m", "rad", "rad"), strict=True)
        )
        lines.append(f"{model:10s} {text}  {'pass' if entry['pass'] else 'FAIL'}")
    order = result["oracle_order"]
    lines += [
        "tolerance (hip, knee): pos {:.2e}, {:.2e} rad; tau {:.2e}, {:.2e} N·m "
        "(ratio {} x the best model's error vs the oracle)".format(
            *tolerance["pos_rmse"], *tolerance["tau_rmse"], settings["tolerance_ratio"]
        ),
        f"models by position error vs oracle: Isaac {' < '.join(order['isaac'])}; "
        f"standalone {' < '.join(order['standalone'])}",
        "PASS" if result["passed"] else "FAIL",
    ]
    return "\n".join(lines)


def same_drive(live: LinkageDriveCfg, expected: LinkageDriveCfg) -> bool:
    """Whether the articulation's drive is ``expected``: equal fields, the gains to float32 (Isaac Lab stores them in
    float32, so 1.2 comes back as 1.2000000476837158)."""
    gains = ("joint_kp", "joint_kd")
    close = all(np.allclose(getattr(live, name), getattr(expected, name), rtol=1e-6, atol=0.0) for name in gains)
    return close and replace(live, **{name: getattr(expected, name) for name in gains}) == expected

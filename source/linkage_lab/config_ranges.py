"""Ranges of the numeric config fields a run divides by, takes logs of or samples from, checked before the env is built.

Hydra checks an override's type, not its value: ``agent.algorithm.learning_rate=-1`` reaches torch's
optimiser and fails there with a traceback, ``...ranges.lin_vel_x=[0.5,0.1]`` samples nothing sensible.
:func:`check_config_ranges` names the first value out of range and the override token that set it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """One field's valid range.

    Attributes:
        path: Dotted path from the config roots (``agent.algorithm.gamma``).
        valid: The test a value must pass (``None`` passes when ``optional``).
        expected: The range in words, for the message.
        optional: ``None`` is a valid value (the feature is off).
    """

    path: str
    valid: Callable[[float], bool]
    expected: str
    optional: bool = False


def _positive(value: float) -> bool:
    return value > 0


def _nonnegative(value: float) -> bool:
    return value >= 0


def _unit(value: float) -> bool:
    return 0 <= value <= 1


def _at_least_one(value: float) -> bool:
    return float(value).is_integer() and value >= 1


#: The fields with a range: PPO's (rsl-rl) and the env's timing. The sizes training divides by or loops
#: over (envs, steps per env, iterations, epochs, mini-batches, save interval) are checked with the
#: command's own options by :func:`linkage_lab.training.trainer.validate_sizes`.
RULES: tuple[Rule, ...] = (
    Rule("agent.algorithm.learning_rate", _positive, "> 0"),
    Rule("agent.algorithm.clip_param", _positive, "> 0"),
    Rule("agent.algorithm.gamma", _unit, "in [0, 1]"),
    Rule("agent.algorithm.lam", _unit, "in [0, 1]"),
    Rule("agent.algorithm.entropy_coef", _nonnegative, ">= 0"),
    Rule("agent.algorithm.value_loss_coef", _nonnegative, ">= 0"),
    Rule("agent.algorithm.max_grad_norm", _positive, "> 0"),
    Rule("agent.algorithm.desired_kl", _positive, "> 0 (or null: no adaptive schedule)", optional=True),
    Rule("agent.clip_actions", _positive, "> 0 (or null: no clipping)", optional=True),
    Rule("agent.actor.distribution_cfg.init_std", _positive, "> 0"),
    Rule("env.decimation", _at_least_one, "a whole number >= 1"),
    Rule("env.sim.dt", _positive, "> 0 s"),
    Rule("env.episode_length_s", _positive, "> 0 s"),
)

_MISSING = object()


def _lookup(roots: dict[str, Any], path: str) -> Any:
    head, *parts = path.split(".")
    node = roots.get(head, _MISSING)
    for part in parts:
        if node is _MISSING or node is None:
            return _MISSING
        node = node.get(part, _MISSING) if isinstance(node, dict) else getattr(node, part, _MISSING)
    return node


def _source(path: str, overrides: Sequence[str]) -> str:
    """The override token that set ``path`` (or a field under it), else the task's config."""
    for token in reversed(list(overrides)):
        key = token.lstrip("+~").partition("=")[0]
        if key == path or path.startswith(key + "."):
            return repr(token)
    return "the task's config"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def range_errors(env_cfg: Any, agent_cfg: Any, overrides: Sequence[str] = ()) -> list[str]:
    """Every value out of its range, one line each naming the token that set it (empty when all are valid)."""
    roots = {"env": env_cfg, "agent": agent_cfg}
    errors = []
    for rule in RULES:
        value = _lookup(roots, rule.path)
        if value is _MISSING or (value is None and rule.optional):
            continue
        if not _is_number(value) or not math.isfinite(value) or not rule.valid(value):
            errors.append(f"{_source(rule.path, overrides)}: {rule.path} must be {rule.expected}, got {value!r}")
    errors += _command_range_errors(env_cfg, overrides)
    errors += _physics_step_errors(env_cfg, overrides)
    return errors


def _physics_step_errors(env_cfg: Any, overrides: Sequence[str]) -> list[str]:
    """Each robot actuator that differences velocities over a step it was given (``physics_dt_s``, the linkage
    actuators' S3N terms) must be given the env's physics step: a task derives it when it is built, so
    ``env.sim.dt=…`` alone leaves the actuator on the old step and its acceleration off by their ratio."""
    dt = _lookup({"env": env_cfg}, "env.sim.dt")
    actuators = _lookup({"env": env_cfg}, "env.scene.robot.actuators")
    if not _is_number(dt) or not isinstance(actuators, dict):
        return []
    errors = []
    for name, actuator in actuators.items():
        step = getattr(actuator, "physics_dt_s", None)
        if _is_number(step) and not math.isclose(step, dt, rel_tol=1e-9):
            path = f"env.scene.robot.actuators.{name}.physics_dt_s"
            errors.append(
                f"{_source('env.sim.dt', overrides)}: env.sim.dt is {dt} s but {path} is {step} s; set "
                f"{path}={dt} too (and, for the same latency in seconds, "
                "env.actions.joint_pos.target_delay_range_steps in steps of the new dt)"
            )
    return errors


def _command_range_errors(env_cfg: Any, overrides: Sequence[str]) -> list[str]:
    """Each command's sampling ranges: two finite numbers, the first not above the second."""
    commands = getattr(env_cfg, "commands", None)
    errors = []
    for name, command in vars(commands).items() if commands is not None else ():
        ranges = getattr(command, "ranges", None)
        if ranges is None or not hasattr(ranges, "__dict__"):
            continue
        for field, bounds in vars(ranges).items():
            if bounds is None:
                continue
            path = f"env.commands.{name}.ranges.{field}"
            numbers = isinstance(bounds, (tuple, list)) and len(bounds) == 2 and all(map(_is_number, bounds))
            if not numbers or not all(math.isfinite(b) for b in bounds):
                errors.append(
                    f"{_source(path, overrides)}: {path} must be [min, max] of finite numbers, got {bounds!r}"
                )
            elif bounds[0] > bounds[1]:
                errors.append(f"{_source(path, overrides)}: {path} has min {bounds[0]} > max {bounds[1]}")
    return errors

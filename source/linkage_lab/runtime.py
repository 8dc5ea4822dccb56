"""Building the project's Isaac Lab environments outside the ``isaaclab`` CLI (bench, eval, tests).

The device is picked here once: a CUDA GPU when one is usable, else the CPU, for the simulation
and the agent alike (Isaac Lab and rsl-rl both default to ``cuda:0``, which fails on a CPU-only
machine).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from linkage_lab.config_ranges import range_errors
from linkage_lab.console import framework_output

#: Hydra override grammar: ``key.path=value`` or a preset selector ``group=name`` (``+``/``~`` prefixes allowed).
_OVERRIDE_RE = re.compile(r"^[+~]{0,2}[A-Za-z_][\w.\[\]-]*=.*$")


class OverrideError(ValueError):
    """A malformed hydra override token."""


def pick_device(requested: str | None = None) -> str:
    """The compute device: ``requested`` when given, else ``cuda:0`` if CUDA works, else ``cpu``.

    ``LINKAGE_LAB_DEVICE`` overrides the automatic choice.
    """
    if requested:
        return requested
    if os.environ.get("LINKAGE_LAB_DEVICE"):
        return os.environ["LINKAGE_LAB_DEVICE"]
    import torch

    try:
        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            torch.zeros(1, device="cuda:0")
            return "cuda:0"
    except (RuntimeError, AssertionError):
        pass
    return "cpu"


class DeviceError(ValueError):
    """A compute device that does not exist or is not usable here."""


def check_device(device: str) -> str:
    """Return ``device`` if the simulation can run on it: ``cpu``, or ``cuda[:N]`` with that GPU present.

    Raises:
        DeviceError: Another device type, a malformed name, or a GPU this machine does not have.
    """
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise DeviceError(f"unknown device {device!r}: use cpu, cuda or cuda:N") from exc
    if parsed.type == "cpu":
        return device
    if parsed.type != "cuda":
        raise DeviceError(f"device {device!r} is not supported: use cpu, cuda or cuda:N")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if (parsed.index or 0) >= count:
        have = f"{count} CUDA device(s)" if count else "no usable CUDA device"
        raise DeviceError(f"device {device!r} is not available: this machine has {have}; use --device cpu")
    return device


def configure_cpu_threads(device: str) -> int:
    """Use one torch thread for a CPU simulation (``LINKAGE_LAB_TORCH_THREADS`` overrides it).

    The simulation's tensors are small (a few hundred envs × a few joints); torch's intra-op
    thread pool then costs far more than it saves, and on a busy 2-core machine its threads spin
    against the physics: the ankle actuator's step measured 41 ms with 2 threads vs 1.2 ms with 1.

    Returns:
        The thread count in force.
    """
    import torch

    if device == "cpu":
        torch.set_num_threads(int(os.environ.get("LINKAGE_LAB_TORCH_THREADS", "1")))
    return torch.get_num_threads()


def validate_overrides(overrides: Sequence[str]) -> list[str]:
    """Check that every token looks like a hydra override; raise :class:`OverrideError` otherwise."""
    bad = [token for token in overrides if not _OVERRIDE_RE.match(token)]
    if bad:
        raise OverrideError(
            f"malformed override(s) {', '.join(map(repr, bad))}: expected key=value tokens such as "
            "env.scene.num_envs=32 agent.max_iterations=5 physics=newton_mjwarp"
        )
    return list(overrides)


def preset_selectors() -> set[str]:
    """The keys that select presets rather than name a config field (``presets``, ``physics``, ``renderer``)."""
    from isaaclab_tasks.utils.preset_target import PresetTarget

    return {target.value for target in PresetTarget}


def check_override_paths(
    roots: dict[str, Any], overrides: Sequence[str], task: str, selectors: set[str] | None = None
) -> dict[str, Callable[..., Any]]:
    """Check that each ``env.…``/``agent.…`` override names an existing field with a compatible value.

    Preset selectors (``presets=…``, ``physics=…``) are left to the preset resolver, which rejects
    unknown names itself. Any other key must start with one of ``roots``: hydra would otherwise add
    it (``+envs.…``, silently ignored) or fail with a multi-line report (``envs.…``). A field that
    holds a function (a factory, a term's ``func``) takes ``module:name`` and gets that function.

    Args:
        roots: The config roots by name (``env``, ``agent``).
        overrides: The override tokens.
        task: Task id, for the messages.
        selectors: Preset selector keys; ``None``: :func:`preset_selectors`.

    Returns:
        The functions named by overrides of function fields, by dotted path (``env.actions.…``):
        hydra leaves their text in the config, :func:`set_config_path` puts the function there.

    Raises:
        OverrideError: Naming the first unknown root or field, mistyped value, or function that
            cannot be imported.
    """
    import yaml

    selectors = preset_selectors() if selectors is None else selectors
    functions: dict[str, Callable[..., Any]] = {}
    for token in overrides:
        key, _, raw_value = token.lstrip("+~").partition("=")
        head, _, rest = key.partition(".")
        if head not in roots:
            if key in selectors:
                continue
            raise OverrideError(
                f"{token!r}: unknown key {head!r}; overrides start with "
                f"{' or '.join(f'{root}.' for root in roots)} (e.g. env.scene.num_envs=32), "
                f"or select presets ({', '.join(f'{name}=NAME' for name in sorted(selectors))})"
            )
        if not rest or token.startswith(("+", "~")):
            continue
        node: Any = roots[head]
        walked = head
        for part in rest.split("."):
            if isinstance(node, dict):
                if part not in node:
                    raise OverrideError(f"{token!r}: {walked} has no key {part!r} in {task}'s config")
                node = node[part]
            else:
                if not hasattr(node, part):
                    raise OverrideError(f"{token!r}: {walked} has no field {part!r} in {task}'s config")
                node = getattr(node, part)
            walked = f"{walked}.{part}"
        if inspect.isfunction(node) or isinstance(node, functools.partial):
            functions[walked] = _import_function(token, walked, raw_value)
            continue
        try:
            value = yaml.safe_load(raw_value) if raw_value else None
        except yaml.YAMLError as exc:
            raise OverrideError(f"{token!r}: cannot parse value {raw_value!r}: {exc}") from exc
        if isinstance(node, bool):
            ok = isinstance(value, bool)
        elif isinstance(node, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(node, float):
            if isinstance(value, str):  # YAML 1.1 reads 1e-5 (no dot) as text; hydra reads it as a float
                with contextlib.suppress(ValueError):
                    value = float(value)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and not math.isfinite(value):
                raise OverrideError(f"{token!r}: {walked} must be a finite number, got {raw_value!r}")
        else:
            ok = True
        if not ok:
            raise OverrideError(f"{token!r}: {walked} expects {type(node).__name__}, got {raw_value!r}")
    return functions


def _import_function(token: str, path: str, text: str) -> Callable[..., Any]:
    """The function ``module:name`` names, for the function field ``path`` (an :class:`OverrideError` if none)."""
    module_name, colon, name = text.partition(":")
    if not (colon and module_name and name):
        raise OverrideError(f"{token!r}: {path} holds a function; give it as module:name, got {text!r}")
    try:
        target: Any = importlib.import_module(module_name)
        for part in name.split("."):
            target = getattr(target, part)
    except ImportError as exc:
        raise OverrideError(f"{token!r}: cannot import module {module_name!r}: {exc}") from exc
    except AttributeError:
        raise OverrideError(f"{token!r}: module {module_name!r} has no {name!r}") from None
    if not callable(target):
        raise OverrideError(f"{token!r}: {text} is a {type(target).__name__}, not a function")
    return target


def set_config_path(roots: dict[str, Any], path: str, value: Any) -> None:
    """Set the field at dotted ``path`` (its first part a key of ``roots``) to ``value``."""
    head, *parts = path.split(".")
    node = roots[head]
    for part in parts[:-1]:
        node = node[part] if isinstance(node, dict) else getattr(node, part)
    if isinstance(node, dict):
        node[parts[-1]] = value
    else:
        setattr(node, parts[-1], value)


def resolve_configs(task: str, overrides: Sequence[str] = (), device: str | None = None) -> tuple[Any, Any]:
    """Resolve a task's env and agent configs with hydra overrides applied and the device set.

    Raises:
        UnknownTaskError: ``task`` is not a registered task id (the message lists the project's ids).
        OverrideError: An override token is malformed.
        DeviceError: ``device`` (or the automatic choice's override) is not usable here.
    """
    from linkage_lab.tasks.registry import require_task

    require_task(task)
    overrides = validate_overrides(overrides)
    with framework_output(f"configure {task}"):  # Warp's and Isaac Lab's import and parse notices
        from isaaclab_tasks.utils import resolve_task_config

    if overrides:
        # Hydra silently adds unknown keys and accepts any value type: check paths and types first.
        with framework_output(f"configure {task}"):
            base_env, base_agent = resolve_task_config(task, "rsl_rl_cfg_entry_point", overrides=[])
        functions = check_override_paths({"env": base_env, "agent": base_agent}, overrides, task)
    else:
        functions = {}
    report = io.StringIO()
    try:
        # Hydra prints a bad override as a multi-line report on stderr and exits: keep it for the error.
        with framework_output(f"configure {task}"), contextlib.redirect_stderr(report):
            env_cfg, agent_cfg = resolve_task_config(task, "rsl_rl_cfg_entry_point", overrides=overrides)
    except SystemExit as exc:
        raise OverrideError(
            f"cannot apply overrides {' '.join(overrides)} to {task}: {_hydra_report(report.getvalue())}"
        ) from exc
    except Exception as exc:  # hydra and the preset resolver report bad tokens with their own types
        if type(exc).__module__.startswith(("hydra", "omegaconf")) or isinstance(exc, (KeyError, ValueError)):
            raise OverrideError(f"cannot apply overrides {' '.join(overrides)} to {task}: {exc}") from exc
        sys.stderr.write(report.getvalue())
        raise
    sys.stderr.write(report.getvalue())
    for path, function in functions.items():
        set_config_path({"env": env_cfg, "agent": agent_cfg}, path, function)
    out_of_range = range_errors(env_cfg, agent_cfg, overrides)
    if out_of_range:
        raise OverrideError(out_of_range[0])
    device = check_device(pick_device(device))
    env_cfg.sim.device = device
    if agent_cfg is not None and not any(o.startswith("agent.device=") for o in overrides):
        agent_cfg.device = device
    return env_cfg, agent_cfg


def _hydra_report(text: str) -> str:
    """Hydra's multi-line override report as one line, without its traceback hint."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and "HYDRA_FULL_ERROR" not in line]
    return " ".join(lines) or "hydra rejected them"


class _SimulationAborted(SystemExit):
    """Carries an exception of the caller's block out of ``launch_simulation`` (exit status 1).

    ``launch_simulation`` prints the traceback of any ``Exception`` raised in its block before
    re-raising it, so a user error (a policy file that does not fit, an unwritable output) would
    print a traceback above the command's one-line message. A ``SystemExit`` passes through
    silently with its status; :func:`make_env` re-raises the original exception after the
    simulation has closed, and whoever catches it decides: one line for a user error, the
    traceback (printed by Python) for a bug.
    """

    def __init__(self, error: Exception):
        super().__init__(1)
        self.error = error


@contextlib.contextmanager
def make_env(
    task: str,
    num_envs: int | None = None,
    device: str | None = None,
    overrides: Sequence[str] = (),
    env_cfg_hook: Any = None,
) -> Iterator[tuple[Any, Any]]:
    """Build a task's environment; yields ``(env, agent_cfg)`` and closes the env on exit.

    Args:
        task: Registered task id.
        num_envs: Number of parallel environments (``None`` keeps the config's).
        device: Device; ``None`` picks one (:func:`pick_device`).
        overrides: Hydra overrides (``env.…=…``, ``agent.…=…``, presets).
        env_cfg_hook: Optional callable applied to the resolved env config before the env is built.
    """
    import gymnasium as gym
    from isaaclab.app import launch_simulation

    env_cfg, agent_cfg = resolve_configs(task, overrides, device)
    configure_cpu_threads(env_cfg.sim.device)
    if num_envs is not None:
        env_cfg.scene.num_envs = int(num_envs)
    if env_cfg_hook is not None:
        env_cfg_hook(env_cfg)

    error: Exception | None = None
    try:
        with contextlib.ExitStack() as simulation:
            # Isaac Lab's launch and env build print manager tables and warnings: the framework log's.
            with framework_output(f"build {task} ({env_cfg.scene.num_envs} envs, {env_cfg.sim.device})"):
                simulation.enter_context(launch_simulation(env_cfg, {"headless": True, "device": env_cfg.sim.device}))
                try:
                    env = gym.make(task, cfg=env_cfg)
                except Exception as exc:
                    raise _SimulationAborted(exc) from None
            try:
                yield env, agent_cfg
            except Exception as exc:
                raise _SimulationAborted(exc) from None
            finally:
                with framework_output(f"close {task}"):
                    env.close()
    except _SimulationAborted as aborted:
        error = aborted.error
    if error is not None:
        # Raised outside the handler, so its traceback and cause are its own (no SystemExit context).
        raise error

"""Policies evaluation can run: an rsl-rl checkpoint, an exported ONNX file, and a registry for more.

A policy maps the actor's observation — the actor's observation groups concatenated in order,
``(num_envs, n_obs)`` — to actions ``(num_envs, n_actions)`` and is told which envs finished their
episode (``reset(dones)``). :data:`POLICY_LOADERS` maps a name (``linkage-lab eval --policy NAME``)
to ``loader(env, agent_cfg, args) -> Policy``; adding a policy type is one entry there.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from linkage_lab.paths import LOG_DIR


class PolicyLoadError(RuntimeError):
    """A policy could not be loaded: missing, unreadable or not matching the task."""


class Policy(Protocol):
    """What the evaluation loop needs of a policy."""

    #: JSON-ready description for reports (type, source file, ...); optional, the report falls
    #: back to the policy type's name.
    description: dict[str, Any]

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """Actions ``(num_envs, n_actions)`` for the actor observation ``(num_envs, n_obs)``."""

    def reset(self, dones: torch.Tensor) -> None:
        """Forget per-episode state of the envs where ``dones`` is set."""


#: ``loader(env, agent_cfg, args) -> Policy``. ``env`` is the :class:`RslRlVecEnvWrapper` around the
#: task's env (``env.unwrapped`` is the Isaac Lab env, for policies that read robot state);
#: ``args`` carries the command's options (``checkpoint``, ``onnx``, ``task``, ...).
PolicyLoader = Callable[[Any, Any, Any], Policy]


def actor_groups(agent_cfg: Any) -> list[str]:
    """Observation groups the actor reads, in order (rsl-rl ``obs_groups["actor"]``, default ``policy``)."""
    groups = getattr(agent_cfg, "obs_groups", None) or {}
    return list(groups.get("actor", ["policy"]))


def actor_observation(obs: Any, groups: list[str]) -> torch.Tensor:
    """Concatenate the actor's groups of an observation dict / TensorDict into ``(num_envs, n_obs)``."""
    return torch.cat([obs[group] for group in groups], dim=-1)


def resolve_checkpoint(spec: str | Path, task: str, experiment_name: str, log_root: Path = LOG_DIR) -> Path:
    """A checkpoint file from ``spec``: a ``.pt`` file, a run folder (its latest model), ``latest`` or
    ``pretrained`` (the policy shipped for ``task`` under ``policies/<task>/``).

    ``latest`` is the highest-iteration model of the newest run of the task's experiment that holds
    one (``<log_root>/rsl_rl/<experiment>/<run>/model_<it>.pt``), runs ordered by the start time in
    their folder names.

    Raises:
        PolicyLoadError: Nothing to load there.
    """
    from linkage_lab.pretrained import PRETRAINED, NoPretrainedPolicy, pretrained_checkpoint
    from linkage_lab.runs import experiment_dir, latest_checkpoint, latest_run_dir, list_runs

    if str(spec) == PRETRAINED:
        try:
            return pretrained_checkpoint(task)
        except NoPretrainedPolicy as exc:
            raise PolicyLoadError(str(exc)) from exc
    if str(spec) == "latest":
        run_dir = latest_run_dir(experiment_name, log_root)
        if run_dir is None:
            runs = list_runs(experiment_name, log_root)
            if runs:
                raise PolicyLoadError(
                    f"no run of experiment {experiment_name!r} under {experiment_dir(experiment_name, log_root)} "
                    f"holds a checkpoint (run {runs[-1].name} holds no model_<iteration>.pt); "
                    f"train first: linkage-lab train --task {task}"
                )
            raise PolicyLoadError(
                f"no training runs of experiment {experiment_name!r} under {log_root / 'rsl_rl'}; "
                f"train first: linkage-lab train --task {task}"
            )
        spec = run_dir
    path = Path(spec).expanduser()
    if path.is_dir():
        checkpoint = latest_checkpoint(path)
        if checkpoint is None:
            raise PolicyLoadError(f"run folder {path} holds no model_<iteration>.pt checkpoint")
        return checkpoint
    if not path.is_file():
        raise PolicyLoadError(f"checkpoint {path} does not exist")
    return path


def read_checkpoint(path: Path, task: str | None = None) -> dict[str, Any]:
    """Load an rsl-rl checkpoint on the CPU as data, checking it is one and, when its run says so, of ``task``.

    Only tensors, numbers, strings and plain containers are read (``torch.load(weights_only=True)``):
    a file holding other pickled objects is refused, since unpickling them could run code.

    Raises:
        PolicyLoadError: Missing, unreadable (truncated, corrupt, not a PyTorch file), holding other
            objects, not an rsl-rl checkpoint, or from a run of another task (the run's ``run.json``).
    """
    from linkage_lab.checkpoints import CheckpointError, load_checkpoint

    path = Path(path)
    try:
        state = load_checkpoint(path)
    except CheckpointError as exc:
        raise PolicyLoadError(str(exc)) from exc
    trained_task = _run_task(path)
    if task is not None and trained_task is not None and trained_task != task:
        raise PolicyLoadError(f"checkpoint {path} was trained on task {trained_task}, not {task}")
    return state


def build_runner(env: Any, agent_cfg: Any) -> Any:
    """An rsl-rl runner for ``env`` (an :class:`RslRlVecEnvWrapper`) without logging.

    ``agent_cfg`` is copied before rsl-rl's version migration, which edits the config it gets.
    """
    from isaaclab_rl.rsl_rl import check_rsl_rl_version, create_rsl_rl_runner, handle_deprecated_rsl_rl_cfg

    from linkage_lab.console import framework_output

    agent_cfg = handle_deprecated_rsl_rl_cfg(copy.deepcopy(agent_cfg), check_rsl_rl_version())
    with framework_output("rsl-rl runner"):  # rsl-rl prints its models
        return create_rsl_rl_runner(env, agent_cfg)


def load_runner(path: Path, env: Any, agent_cfg: Any, task: str | None = None) -> Any:
    """An rsl-rl runner for ``env`` with the checkpoint at ``path`` loaded (on the agent's device).

    The file is read once, as data (:func:`read_checkpoint`), and its state handed to the runner;
    rsl-rl's own ``runner.load`` would unpickle it in full.

    Raises:
        PolicyLoadError: As :func:`read_checkpoint`, or when the checkpoint's networks do not fit the
            task's (observation or action size, architecture).
    """
    from linkage_lab.checkpoints import CheckpointError, restore_runner

    state = read_checkpoint(path, task)
    runner = build_runner(env, agent_cfg)
    _check_shapes(path, state["actor_state_dict"], runner.alg.get_policy().state_dict(), task)
    try:
        restore_runner(runner, state, load_optimizer="optimizer_state_dict" in state)
    except CheckpointError as exc:
        raise PolicyLoadError(f"checkpoint {path} does not fit {task or 'the task'}: {exc}") from exc
    return runner


class CheckpointPolicy:
    """The deterministic actor of an rsl-rl runner (observation normaliser included).

    Args:
        runner: A runner with its checkpoint loaded.
        group_sizes: ``[(group, size)]`` of the actor's observation groups, in order.
        description: JSON-ready description.
    """

    def __init__(self, runner: Any, group_sizes: list[tuple[str, int]], description: dict[str, Any]):
        self.runner = runner
        self.model = runner.get_inference_policy(device=runner.device)
        self.group_sizes = group_sizes
        self.description = description

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        from tensordict import TensorDict

        groups = dict(
            zip(
                [g for g, _ in self.group_sizes],
                obs.split([s for _, s in self.group_sizes], dim=-1),
                strict=True,
            )
        )
        return self.model(TensorDict(groups, batch_size=[obs.shape[0]]))

    def reset(self, dones: torch.Tensor) -> None:
        self.model.reset(dones)


def load_checkpoint_policy(path: Path, env: Any, agent_cfg: Any, task: str | None = None) -> CheckpointPolicy:
    """A :class:`CheckpointPolicy` from an rsl-rl checkpoint for ``env`` (an :class:`RslRlVecEnvWrapper`).

    Raises:
        PolicyLoadError: See :func:`load_runner`.
    """
    path = Path(path)
    runner = load_runner(path, env, agent_cfg, task)
    obs = env.get_observations()
    sizes = [(group, int(obs[group].shape[-1])) for group in actor_groups(agent_cfg)]
    iteration = getattr(runner, "current_learning_iteration", None)
    return CheckpointPolicy(runner, sizes, {"type": "checkpoint", "path": str(path.resolve()), "iteration": iteration})


class OnnxPolicy:
    """An ONNX actor run by onnxruntime on the CPU (input ``[batch, n_obs]``; a fixed batch of 1 is looped).

    Args:
        path: The ``.onnx`` file.

    Raises:
        PolicyLoadError: Missing or not loadable by onnxruntime.
    """

    def __init__(self, path: Path):
        import onnxruntime as ort

        path = Path(path)
        if not path.is_file():
            raise PolicyLoadError(f"ONNX file {path} does not exist")
        try:
            self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for invalid models
            raise PolicyLoadError(f"ONNX file {path} cannot be loaded: {exc}") from exc
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        if len(inputs) != 1 or len(inputs[0].shape) != 2 or not outputs or len(outputs[0].shape) != 2:
            raise PolicyLoadError(
                f"ONNX file {path} is not a policy: expected one input [batch, observations] and an output "
                f"[batch, actions], got inputs {[i.shape for i in inputs]} and outputs {[o.shape for o in outputs]}"
            )
        self.input_name = inputs[0].name
        batch, self.obs_dim = inputs[0].shape
        #: Action size; an int, or a name when the file leaves it symbolic.
        self.action_dim = outputs[0].shape[1]
        self.fixed_batch = batch if isinstance(batch, int) else None
        self.description = {"type": "onnx", "path": str(path.resolve())}

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        array = obs.detach().to("cpu", torch.float32).numpy()
        if self.fixed_batch == 1:
            outputs = [self.session.run(None, {self.input_name: array[i : i + 1]})[0] for i in range(len(array))]
            result = torch.from_numpy(np.concatenate(outputs))
        else:
            result = torch.from_numpy(self.session.run(None, {self.input_name: array})[0])
        return result.to(obs.device)

    def reset(self, dones: torch.Tensor) -> None:
        """Stateless (a feed-forward actor)."""


def load_onnx_policy(path: Path, obs_dim: int | None = None, action_dim: int | None = None) -> OnnxPolicy:
    """An :class:`OnnxPolicy`, checked against the task's actor observation and action sizes when given.

    An output size the file leaves symbolic is measured on one zero observation.

    Raises:
        PolicyLoadError: Missing, not loadable, or made for another observation or action size.
    """
    policy = OnnxPolicy(path)
    if obs_dim is not None and isinstance(policy.obs_dim, int) and policy.obs_dim != obs_dim:
        raise PolicyLoadError(
            f"ONNX file {path} expects {policy.obs_dim} observations, "
            f"the task's actor gets {obs_dim} (an export of another task?)"
        )
    produced = policy.action_dim
    if action_dim is not None and not isinstance(produced, int) and obs_dim is not None:
        try:
            produced = int(policy(torch.zeros(1, obs_dim)).shape[-1])
        except Exception as exc:  # onnxruntime raises its own types for a graph that cannot run
            raise PolicyLoadError(f"ONNX file {path} does not run on a {obs_dim}-observation input: {exc}") from exc
    if action_dim is not None and isinstance(produced, int) and produced != action_dim:
        raise PolicyLoadError(
            f"ONNX file {path} outputs {produced} actions, the task takes {action_dim} (an export of another task?)"
        )
    return policy


def _checkpoint_loader(env: Any, agent_cfg: Any, args: Any) -> Policy:
    return load_checkpoint_policy(Path(args.checkpoint), env, agent_cfg, getattr(args, "task", None))


def _onnx_loader(env: Any, agent_cfg: Any, args: Any) -> Policy:
    obs_dim = int(actor_observation(env.get_observations(), actor_groups(agent_cfg)).shape[-1])
    return load_onnx_policy(Path(args.onnx), obs_dim, int(env.num_actions))


def _scripted_loader(env: Any, agent_cfg: Any, args: Any) -> Policy:
    """The robot's scripted gait (docs/design/gait.md), reading the robot's sensors; the trot follows the command.

    On a residual task (actions added to the task's own gait prior) it is the prior alone: zero actions.
    """
    from linkage_lab.evaluation.robot_info import robot_name
    from linkage_lab.gait.policy import ScriptedPolicy
    from linkage_lab.robots.registry import get_robot

    term = env.unwrapped.action_manager.get_term("joint_pos")
    if getattr(term, "gait_prior", None) is not None:
        # A residual task's actions correct its own gait: its scripted policy is no correction.
        from linkage_lab.tasks.velocity.residual import GaitPriorPolicy

        return GaitPriorPolicy(env)
    spec = get_robot(robot_name(env))
    # The robot's best scripted walk: its sprint gait where it has one, else its velocity gait.
    gait = spec.sprint_gait() if spec.sprint_gait is not None else spec.require("scripted_gait")(term._joint_names)
    return ScriptedPolicy(env, gait)


#: Policy types by name: ``loader(env, agent_cfg, args) -> Policy`` (see :data:`PolicyLoader`).
POLICY_LOADERS: dict[str, PolicyLoader] = {
    "checkpoint": _checkpoint_loader,
    "onnx": _onnx_loader,
    "scripted": _scripted_loader,
}


def _run_task(checkpoint: Path) -> str | None:
    """The task id Isaac Lab recorded for the checkpoint's run (``run.json``), if any."""
    run_file = checkpoint.parent / "run.json"
    try:
        return json.loads(run_file.read_text()).get("task")
    except (OSError, ValueError, AttributeError):
        return None


def _check_shapes(
    path: Path, saved: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], task: str | None
) -> None:
    """Raise :class:`PolicyLoadError` naming observation/action sizes when the actor does not fit."""
    mismatched = sorted(
        key
        for key in set(saved) | set(expected)
        if key not in saved or key not in expected or tuple(saved[key].shape) != tuple(expected[key].shape)
    )
    if not mismatched:
        return
    where = task or "the task"
    saved_dims, task_dims = _io_dims(saved), _io_dims(expected)
    if saved_dims != task_dims:
        raise PolicyLoadError(
            f"checkpoint {path} does not fit {where}: it was trained with {saved_dims[0]} observations and "
            f"{saved_dims[1]} actions, {where} has {task_dims[0]} observations and {task_dims[1]} actions "
            "(a checkpoint of another task?)"
        )
    raise PolicyLoadError(
        f"checkpoint {path} does not fit {where}'s actor network (another architecture): "
        f"missing, extra or reshaped parameters {mismatched}"
    )


def _io_dims(state: dict[str, torch.Tensor]) -> tuple[int | None, int | None]:
    """(observation size, action size) of an MLP actor's state dict (first and last linear layer)."""
    weights = [v for k, v in state.items() if k.startswith("mlp.") and k.endswith("weight") and v.ndim == 2]
    if not weights:
        return None, None
    return int(weights[0].shape[1]), int(weights[-1].shape[0])

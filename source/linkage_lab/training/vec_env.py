"""The envs a training run steps: one Isaac Lab env in this process, or several simulation processes.

How many processes (:func:`default_workers`, :func:`check_workers`) and the ``VecEnv`` rsl-rl reads
(:func:`training_vec_env`), for :func:`~linkage_lab.training.trainer.train` and ``bench train`` alike.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from linkage_lab.console import say
from linkage_lab.training.errors import TrainingConfigError

#: Fewest envs per simulation process when the count is picked automatically: below it a process's
#: fixed cost per step (Isaac Lab's managers, the learner's messages) outweighs the parallelism.
MIN_ENVS_PER_WORKER = 32


def default_workers(num_envs: int, device: str) -> int:
    """The simulation process count when none is given: one per CPU core, at least 32 envs each; 1 on a GPU.

    ``LINKAGE_LAB_WORKERS`` overrides it (e.g. ``1`` to keep the second core for another run).
    """
    import os

    text = os.environ.get("LINKAGE_LAB_WORKERS", "").strip()
    if text:
        if not text.isdigit():
            raise TrainingConfigError(f"LINKAGE_LAB_WORKERS must be a whole number, got {text!r}")
        return int(text)
    if not device.startswith("cpu"):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, num_envs // MIN_ENVS_PER_WORKER))


def check_workers(workers: int | None, num_envs: int, device: str) -> int:
    """The simulation process count of a run (:func:`default_workers` when not given).

    Raises:
        TrainingConfigError: Not a whole number ≥ 1, more workers than envs, or several on a GPU.
    """
    count = default_workers(num_envs, device) if workers is None else workers
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise TrainingConfigError(f"--workers must be a whole number of at least 1, got {workers!r}")
    if count > num_envs:
        raise TrainingConfigError(f"--workers {count} needs at least {count} envs, the run has {num_envs}")
    if count > 1 and not device.startswith("cpu"):
        raise TrainingConfigError(f"--workers runs CPU simulations side by side; on {device} use --workers 1")
    return count


@contextlib.contextmanager
def training_vec_env(
    task: str,
    num_envs: int,
    workers: int,
    device: str,
    overrides: list[str],
    configs: tuple[Any, Any],
    seed: int,
    prepare: Any = None,
) -> Iterator[tuple[Any, Any]]:
    """The run's rsl-rl ``VecEnv`` and agent config: one Isaac Lab env here, or ``workers`` processes.

    Args:
        configs: The task's resolved ``(env_cfg, agent_cfg)`` with ``overrides`` applied.
        seed: The env seed (worker ``r`` of several uses ``seed + r``).
        prepare: Called with the env config before the envs are built (the run folder, the seed).
    """
    if workers == 1:
        from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

        from linkage_lab.runtime import make_env

        with make_env(task, num_envs, device, overrides, env_cfg_hook=prepare) as (env, agent_cfg):
            yield RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions), agent_cfg
        return
    from linkage_lab.training.parallel import ParallelVecEnv

    env_cfg, agent_cfg = configs
    env_cfg.scene.num_envs = num_envs
    if prepare is not None:
        prepare(env_cfg)
    say(f"starting {workers} simulation processes ({num_envs} envs)")
    vec = ParallelVecEnv(
        task, num_envs, workers, device, overrides, seed, env_cfg, env_cfg.log_dir, agent_cfg.clip_actions
    )
    try:
        yield vec, agent_cfg
    finally:
        vec.close()

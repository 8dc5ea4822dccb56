"""One env-throughput measurement in a fresh process (``python -m linkage_lab_experiments.bench.env_worker``).

A fresh process per measurement keeps simulator state from leaking between variants; the
caller interleaves variants and compares them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

#: The line a worker prints its JSON result on.
RESULT_PREFIX = "LINKAGE_LAB_RESULT "


def measure(task: str, num_envs: int, steps: int, warmup: int, overrides: list[str]) -> dict:
    """Env-steps per second of ``task`` with zero actions, after ``warmup`` steps (kernels compiled)."""
    from linkage_lab.runtime import make_env

    with make_env(task, num_envs=num_envs, overrides=overrides) as (env, _):
        actions = warm_zero_actions(env, warmup)
        elapsed = timed_steps(env, actions, steps)
    return {
        "task": task,
        "num_envs": num_envs,
        "steps": steps,
        "seconds": elapsed,
        "env_steps_per_s": num_envs * steps / elapsed,
        "overrides": overrides,
    }


def warm_zero_actions(env: Any, warmup: int) -> Any:
    """Reset ``env``, step it ``warmup`` times with zero actions (kernels compiled), return the actions."""
    import torch

    unwrapped = env.unwrapped
    env.reset()
    actions = torch.zeros(unwrapped.num_envs, unwrapped.action_manager.total_action_dim, device=unwrapped.device)
    for _ in range(warmup):
        env.step(actions)
    return actions


def timed_steps(env: Any, actions: Any, steps: int) -> float:
    """Seconds for ``steps`` env steps with ``actions``."""
    start = time.perf_counter()
    for _ in range(steps):
        env.step(actions)
    return time.perf_counter() - start


def worker_main(measure_fn: Callable[..., dict], default_steps: int, argv: list[str] | None = None) -> int:
    """A bench worker's command line: ``--task --num-envs [--steps --warmup] [overrides]``; prints the result line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", required=True)
    parser.add_argument("--num-envs", type=int, required=True)
    parser.add_argument("--steps", type=int, default=default_steps)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    result = measure_fn(args.task, args.num_envs, args.steps, args.warmup, args.overrides)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return worker_main(measure, 200, argv)


if __name__ == "__main__":
    sys.exit(main())

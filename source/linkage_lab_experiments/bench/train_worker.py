"""One PPO-throughput measurement in a fresh process (``python -m linkage_lab_experiments.bench.train_worker``).

The task's own agent config is trained for ``warmup + iterations`` iterations without logging;
the collection and update time of each iteration are the rsl-rl runner's own (``collect_time``,
``learn_time``, which it hands its logger), so they split an iteration exactly as training does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any

from linkage_lab.runtime import configure_cpu_threads, resolve_configs


def measure(task: str, num_envs: int, iterations: int, warmup: int, overrides: list[str], workers: int = 1) -> dict:
    """Seconds per PPO iteration (collection, update) of ``task`` at ``num_envs``, after ``warmup`` iterations.

    ``workers`` > 1 steps the envs in that many simulation processes, as ``train --workers`` does.
    """
    from linkage_lab.evaluation.policies import build_runner

    samples: list[tuple[float, float]] = []
    with _vec_env(task, num_envs, overrides, workers) as (env, agent_cfg):
        runner = build_runner(env, agent_cfg)
        if workers > 1:
            from linkage_lab.training.parallel import update_with_threads

            update_with_threads(runner, workers)  # as train --workers does
        log = runner.logger.log

        def timed_log(*args, **kwargs):
            samples.append((float(kwargs["collect_time"]), float(kwargs["learn_time"])))
            return log(*args, **kwargs)

        runner.logger.log = timed_log
        start = time.perf_counter()
        runner.learn(warmup + iterations, init_at_random_ep_len=bool(getattr(agent_cfg, "init_at_random_ep_len", True)))
        wall_s = time.perf_counter() - start
        steps_per_env = int(agent_cfg.num_steps_per_env)
        device = str(env.device)
    timed = samples[warmup:]
    if len(timed) != iterations:
        raise RuntimeError(f"expected {warmup + iterations} timed iterations, the runner reported {len(samples)}")
    collection = statistics.mean(c for c, _ in timed)
    update = statistics.mean(u for _, u in timed)
    iteration = collection + update
    return {
        "task": task,
        "num_envs": num_envs,
        "workers": workers,
        "num_steps_per_env": steps_per_env,
        "device": device,
        "warmup_iterations": warmup,
        "iterations": iterations,
        "collection_s_per_it": collection,
        "update_s_per_it": update,
        "iteration_s": iteration,
        "iterations_per_s": 1.0 / iteration,
        "env_steps_per_s": num_envs * steps_per_env / iteration,
        "collection_env_steps_per_s": num_envs * steps_per_env / collection,
        "samples_s": [{"collection": c, "update": u} for c, u in timed],
        "learn_wall_s": wall_s,
        "overrides": overrides,
    }


@contextlib.contextmanager
def _vec_env(task: str, num_envs: int, overrides: list[str], workers: int) -> Iterator[tuple[Any, Any]]:
    """The rsl-rl ``VecEnv`` and agent config of the measurement, built as training builds them."""
    from linkage_lab.training.vec_env import training_vec_env

    env_cfg, agent_cfg = resolve_configs(task, overrides)
    configure_cpu_threads(env_cfg.sim.device)
    with training_vec_env(
        task, num_envs, workers, env_cfg.sim.device, overrides, (env_cfg, agent_cfg), int(agent_cfg.seed)
    ) as built:
        yield built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", required=True)
    parser.add_argument("--num-envs", type=int, required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    result = measure(args.task, args.num_envs, args.iterations, args.warmup, args.overrides, args.workers)
    print("LINKAGE_LAB_RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

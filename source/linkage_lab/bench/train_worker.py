"""One PPO-throughput measurement in a fresh process (``python -m linkage_lab.bench.train_worker``).

The task's own agent config is trained for ``warmup + iterations`` iterations without logging;
the collection and update time of each iteration are the rsl-rl runner's own (``collect_time``,
``learn_time``, which it hands its logger), so they split an iteration exactly as training does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def measure(task: str, num_envs: int, iterations: int, warmup: int, overrides: list[str]) -> dict:
    """Seconds per PPO iteration (collection, update) of ``task`` at ``num_envs``, after ``warmup`` iterations."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.evaluation.policies import build_runner
    from linkage_lab.runtime import make_env

    samples: list[tuple[float, float]] = []
    with make_env(task, num_envs=num_envs, overrides=overrides) as (env, agent_cfg):
        runner = build_runner(RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions), agent_cfg)
        log = runner.logger.log

        def timed_log(*args, **kwargs):
            samples.append((float(kwargs["collect_time"]), float(kwargs["learn_time"])))
            return log(*args, **kwargs)

        runner.logger.log = timed_log
        start = time.perf_counter()
        runner.learn(warmup + iterations, init_at_random_ep_len=bool(getattr(agent_cfg, "init_at_random_ep_len", True)))
        wall_s = time.perf_counter() - start
        steps_per_env = int(agent_cfg.num_steps_per_env)
        device = str(env.unwrapped.device)
    timed = samples[warmup:]
    if len(timed) != iterations:
        raise RuntimeError(f"expected {warmup + iterations} timed iterations, the runner reported {len(samples)}")
    collection = statistics.mean(c for c, _ in timed)
    update = statistics.mean(u for _, u in timed)
    iteration = collection + update
    return {
        "task": task,
        "num_envs": num_envs,
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", required=True)
    parser.add_argument("--num-envs", type=int, required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    result = measure(args.task, args.num_envs, args.iterations, args.warmup, args.overrides)
    print("LINKAGE_LAB_RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

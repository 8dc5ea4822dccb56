"""``linkage-lab bench env``: env-steps/s for one or more variants, interleaved, with ratios."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence


def run_worker(
    task: str, num_envs: int, steps: int, warmup: int, overrides: Sequence[str], module: str = "env_worker"
) -> dict:
    """Run one measurement (``linkage_lab_experiments.bench.<module>``) in a fresh process; returns its result."""
    cmd = [sys.executable, "-m", f"linkage_lab_experiments.bench.{module}", "--task", task, "--num-envs", str(num_envs)]
    cmd += ["--steps", str(steps), "--warmup", str(warmup), *overrides]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("LINKAGE_LAB_RESULT "):
            return json.loads(line.split(" ", 1)[1])
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
    raise RuntimeError(f"benchmark worker failed (exit {proc.returncode}):\n{tail}")


def run_variants(
    task: str,
    num_envs_list: Sequence[int],
    variants: dict[str, list[str]],
    steps: int = 200,
    warmup: int = 30,
    rounds: int = 1,
    progress: bool = True,
) -> list[dict]:
    """Measure every (num_envs, variant) pair ``rounds`` times, interleaving variants within a round.

    Returns:
        One row per (num_envs, variant): median env-steps/s over the rounds and the ratio to the
        first variant at the same num_envs.
    """
    from tqdm import tqdm

    samples: dict[tuple[int, str], list[float]] = {}
    jobs = [(n, name) for _ in range(rounds) for n in num_envs_list for name in variants]
    for num_envs, name in tqdm(jobs, desc="bench env", disable=not progress, unit="run"):
        result = run_worker(task, num_envs, steps, warmup, variants[name])
        samples.setdefault((num_envs, name), []).append(result["env_steps_per_s"])
    rows = []
    baseline_name = next(iter(variants))
    for num_envs in num_envs_list:
        baseline = statistics.median(samples[(num_envs, baseline_name)])
        for name in variants:
            value = statistics.median(samples[(num_envs, name)])
            rows.append(
                {
                    "task": task,
                    "variant": name,
                    "num_envs": num_envs,
                    "env_steps_per_s": value,
                    "samples": samples[(num_envs, name)],
                    "ratio_to_first": value / baseline,
                }
            )
    return rows


def format_rows(rows: list[dict]) -> str:
    """A table for people."""
    lines = [f"{'task':34s} {'variant':14s} {'envs':>6s} {'env-steps/s':>12s} {'ratio':>7s}"]
    for row in rows:
        lines.append(
            f"{row['task']:34s} {row['variant']:14s} {row['num_envs']:6d} "
            f"{row['env_steps_per_s']:12.0f} {row['ratio_to_first']:7.3f}"
        )
    return "\n".join(lines)


def run_profiles(
    task: str, num_envs_list: Sequence[int], steps: int, warmup: int, overrides: Sequence[str], progress: bool = True
) -> list[dict]:
    """Profile one env step at each env count, each in a fresh process.

    See :mod:`linkage_lab_experiments.bench.step_profile`.
    """
    from tqdm import tqdm

    return [
        run_worker(task, num_envs, steps, warmup, overrides, module="step_profile")
        for num_envs in tqdm(list(num_envs_list), desc="bench env --profile", disable=not progress, unit="run")
    ]

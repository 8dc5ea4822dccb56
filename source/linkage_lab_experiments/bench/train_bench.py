"""``linkage-lab bench train``: PPO iterations/s, collection vs update time, at several env counts.

Each env count runs in a fresh process (:mod:`linkage_lab_experiments.bench.train_worker`), so no simulator state
or compiled-kernel warmth leaks from one to the next beyond the on-disk Warp cache every run shares.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from linkage_lab.io import save_figure_atomic, write_json_atomic

RESULT_PREFIX = "LINKAGE_LAB_RESULT "


def run_train_worker(
    task: str, num_envs: int, iterations: int, warmup: int, overrides: Sequence[str], workers: int = 1
) -> dict:
    """One measurement in a fresh Python process (``workers`` simulation processes under it); its result.

    Raises:
        RuntimeError: The worker failed (the message ends with its output's last lines).
    """
    cmd = [
        sys.executable,
        "-m",
        "linkage_lab_experiments.bench.train_worker",
        "--task",
        task,
        "--num-envs",
        str(num_envs),
    ]
    cmd += ["--iterations", str(iterations), "--warmup", str(warmup), "--workers", str(workers), *overrides]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
    where = f"{num_envs} envs" + (f" x {workers} workers" if workers > 1 else "")
    raise RuntimeError(f"training benchmark worker failed at {where} (exit {proc.returncode}):\n{tail}")


def run_train_bench(
    task: str,
    num_envs_list: Sequence[int],
    iterations: int = 5,
    warmup: int = 2,
    overrides: Sequence[str] = (),
    progress: bool = True,
    workers_list: Sequence[int] = (1,),
    variants: dict[str, list[str]] | None = None,
) -> dict:
    """Measure every (env count, variant, simulation processes); rows carry ratios to the first.

    ``variants`` maps a name to extra overrides (on top of ``overrides``), as ``bench env --variant``.

    Returns:
        ``{"task", "overrides", "machine", "rows": [...]}``; each row is a worker result plus
        ``ratio_to_first`` of its env-steps/s, collection and update time.
    """
    from tqdm import tqdm

    rows = []
    start = time.perf_counter()
    variants = variants or {"default": []}
    jobs = [(n, name, w) for n in num_envs_list for name in variants for w in workers_list]
    for num_envs, name, workers in tqdm(jobs, desc="bench train", unit="run", disable=not progress):
        before = os.getloadavg()[0]
        row = run_train_worker(task, num_envs, iterations, warmup, [*overrides, *variants[name]], workers)
        row.setdefault("workers", workers)
        row["variant"] = name
        # Other processes on the same cores slow every number here: the load shows whether there were any.
        row["load_average_1min"] = {"before": before, "after": os.getloadavg()[0]}
        rows.append(row)
    first = rows[0]
    for row in rows:
        row["ratio_to_first"] = {
            key: row[key] / first[key] for key in ("env_steps_per_s", "collection_s_per_it", "update_s_per_it")
        }
    return {
        "task": task,
        "overrides": list(overrides),
        "machine": {
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "torch_threads_env": os.environ.get("LINKAGE_LAB_TORCH_THREADS"),
        },
        "total_wall_s": time.perf_counter() - start,
        "rows": rows,
    }


def format_table(result: dict) -> str:
    """The table for people: per env count, seconds per iteration split, throughput, ratios to the first row."""
    rows = result["rows"]
    header = (
        f"{'variant':14s} {'envs':>6s} {'procs':>5s} {'collection s/it':>16s} {'update s/it':>12s} "
        f"{'env-steps/s':>12s} {'it/s':>7s}"
        f"   ratio to first: {'steps/s':>7s} {'collect':>7s} {'update':>7s}"
    )
    lines = [
        f"{result['task']}: {rows[0]['num_steps_per_env']} steps per env per iteration, on {rows[0]['device']} "
        f"({result['machine']['cpus']} CPUs, 1-min load average {_load_range(rows)})"
    ]
    lines.append(header)
    for row in rows:
        ratio = row["ratio_to_first"]
        lines.append(
            f"{row.get('variant', 'default'):14s} {row['num_envs']:6d} {row.get('workers', 1):5d} "
            f"{row['collection_s_per_it']:16.3f} {row['update_s_per_it']:12.3f} "
            f"{row['env_steps_per_s']:12,.0f} {row['iterations_per_s']:7.3f}"
            f"   {'':15s} {ratio['env_steps_per_s']:7.2f} {ratio['collection_s_per_it']:7.2f} "
            f"{ratio['update_s_per_it']:7.2f}"
        )
    return "\n".join(lines)


def _label(row: dict) -> str:
    workers = row.get("workers", 1)
    variant = row.get("variant", "default")
    return (
        (f"{variant}\n" if variant != "default" else "")
        + f"{row['num_envs']}"
        + (f" x{workers}" if workers > 1 else "")
    )


def _load_range(rows: list[dict]) -> str:
    loads = [v for row in rows for v in row.get("load_average_1min", {}).values()]
    return f"{min(loads):.1f}-{max(loads):.1f}" if loads else "n/a"


def write_results(result: dict, out_dir: Path) -> tuple[Path, Path]:
    """``train_<task>.json`` and ``train_<task>.png`` (stacked collection/update bars, env-steps/s) in ``out_dir``."""
    from matplotlib.figure import Figure

    stem = f"train_{result['task']}"
    json_path = write_json_atomic(Path(out_dir) / f"{stem}.json", result)
    rows = result["rows"]
    labels = [_label(row) for row in rows]
    collection = [row["collection_s_per_it"] for row in rows]
    update = [row["update_s_per_it"] for row in rows]
    fig = Figure(figsize=(10, 3.8))
    time_ax, rate_ax = fig.subplots(1, 2)
    time_ax.bar(labels, collection, label="collection", color="C0")
    time_ax.bar(labels, update, bottom=collection, label="update", color="C1")
    time_ax.set_xlabel("envs (x simulation processes)")
    time_ax.set_ylabel("s per PPO iteration")
    time_ax.legend()
    rate_ax.bar(labels, [row["env_steps_per_s"] for row in rows], color="C2")
    rate_ax.set_xlabel("envs (x simulation processes)")
    rate_ax.set_ylabel("env-steps/s, learning included")
    for ax in (time_ax, rate_ax):
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"{result['task']}: {rows[0]['num_steps_per_env']} steps/env per iteration, {rows[0]['device']}")
    fig.tight_layout()
    return json_path, save_figure_atomic(fig, Path(out_dir) / f"{stem}.png")

"""Training runs side by side: return, episode length and the command's tracking errors against iteration.

Seeds and variants of one recipe are compared by their curves, not by one number at the end: a run can
peak and sink, or still be climbing when it stops. Each run is a TensorBoard run folder
(``logs/rsl_rl/<experiment>/<run>``) with a label; the figure overlays them per tag and the summary gives,
per run, the last iteration logged, the value there and the mean of the last ``--window`` iterations.

Run ``python -m linkage_lab_experiments.analysis.compare_runs LABEL=RUN_DIR ... --out DIR`` (writes
``DIR/compare_runs.png`` and ``DIR/compare_runs.json``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.evaluation.curves import EPISODE_LENGTH_TAG, RETURN_TAG, Series, read_scalars

#: What is compared, with its axis label.
TAGS = {
    RETURN_TAG: "mean return",
    EPISODE_LENGTH_TAG: "mean episode length (control steps)",
    "Metrics/base_velocity/error_vel_xy": "velocity error (m/s)",
    "Metrics/base_velocity/error_vel_yaw": "yaw-rate error (rad/s)",
    # The training return counts the exploration noise: a policy whose std grows can sink in return while its
    # mean action (what an evaluation runs) does not.
    "Policy/mean_std": "action noise std (policy units)",
}


def summarize(series: Series, window: int) -> dict[str, Any]:
    """The last iteration logged, the value there, the mean over the last ``window`` iterations, and the peak."""
    if series.value.size == 0:
        raise ValueError(f"{series.tag}: no values")
    recent = series.iteration >= series.iteration[-1] - window + 1
    peak = int(np.argmax(series.value))
    return {
        "last_iteration": int(series.iteration[-1]),
        "last": float(series.value[-1]),
        "mean_of_last_window": float(series.value[recent].mean()),
        "max": float(series.value[peak]),
        "max_at_iteration": int(series.iteration[peak]),
    }


def parse_run(text: str) -> tuple[str, Path]:
    """``LABEL=RUN_DIR`` → ``(label, path)``."""
    label, sep, path = text.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=RUN_DIR, got {text!r}")
    return label, Path(path)


def plot(runs: dict[str, dict[str, Series]], path: Path, smooth: int) -> None:
    """One panel per tag of :data:`TAGS`, each run a line (a running mean over ``smooth`` iterations)."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    fig = Figure(figsize=(12, 10))
    axes = fig.subplots(3, 2).ravel()
    for ax in axes[len(TAGS) :]:
        ax.set_visible(False)
    for ax, (tag, label) in zip(axes, TAGS.items(), strict=False):
        for name, series in runs.items():
            if tag not in series:
                continue
            s = series[tag]
            kernel = np.ones(min(smooth, s.value.size)) / min(smooth, s.value.size)
            ax.plot(s.iteration[: s.value.size - kernel.size + 1], np.convolve(s.value, kernel, "valid"), label=name)
        ax.set(xlabel="iteration", ylabel=label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"training runs side by side (running mean over {smooth} iterations)")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=parse_run, help="LABEL=RUN_DIR (a TensorBoard run folder)")
    parser.add_argument("--out", type=Path, required=True, help="folder for compare_runs.png / .json")
    parser.add_argument("--window", type=int, default=50, help="iterations averaged at the end (default 50)")
    parser.add_argument("--smooth", type=int, default=20, help="running-mean width of the plot (default 20)")
    args = parser.parse_args(argv)
    if args.window < 1 or args.smooth < 1:
        parser.error("--window and --smooth take a positive number of iterations")

    from linkage_lab.io import write_json_atomic

    runs = {label: read_scalars(run_dir) for label, run_dir in args.runs}
    summary = {
        label: {
            "run": str(run_dir),
            **{tag: summarize(runs[label][tag], args.window) for tag in TAGS if tag in runs[label]},
        }
        for label, run_dir in args.runs
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out / "compare_runs.json", {"window": args.window, "runs": summary})
    plot(runs, args.out / "compare_runs.png", args.smooth)
    for label, row in summary.items():
        cells = [f"{TAGS[tag].split(' (')[0]} {row[tag]['mean_of_last_window']:.3f}" for tag in TAGS if tag in row]
        last = max((row[tag]["last_iteration"] for tag in TAGS if tag in row), default=-1)
        print(f"{label}: to iteration {last}; mean of the last {args.window}: " + ", ".join(cells))
    print(f"wrote {args.out / 'compare_runs.png'} and {args.out / 'compare_runs.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

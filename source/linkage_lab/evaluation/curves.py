"""Training curves from a run's TensorBoard events: return, episode length and tracking against iteration and wall time.

rsl-rl logs one scalar per iteration (the event's ``step``): ``Train/mean_reward`` (the mean return
of the episodes that ended in the iteration's rollouts), ``Train/mean_episode_length`` (control
steps) and, from Isaac Lab's managers, every reward term's mean per-episode sum
(``Episode_Reward/<term>``, the tracking terms are ``track_*``) and the command's metrics
(``Metrics/base_velocity/error_vel_xy`` in m/s, ``error_vel_yaw`` in rad/s). Wall time is each event's
``wall_time`` less the run's first event (the writer's creation, just before the first iteration).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linkage_lab.io import save_figure_atomic
from linkage_lab.outputs import OutputDirError

#: Folder inside the run that :func:`write_training_curves` writes to.
CURVES_DIR = "curves"
RETURN_TAG = "Train/mean_reward"
EPISODE_LENGTH_TAG = "Train/mean_episode_length"
#: Reward terms that measure command tracking (Isaac Lab's ``track_lin_vel_xy_exp``, ``track_ang_vel_z_exp``).
TRACKING_REWARD = re.compile(r"^Episode_Reward/track_[^/]+$")
#: Command tracking errors logged by the velocity command term.
TRACKING_ERROR = re.compile(r"^Metrics/[^/]+/error_[^/]+$")


class NoEventsError(FileNotFoundError):
    """A folder holds no TensorBoard scalars."""


@dataclass(frozen=True)
class Series:
    """One scalar over a run.

    Attributes:
        tag: TensorBoard tag.
        iteration: Training iteration of each value.
        wall_time_s: Seconds since the run's first event.
        value: The logged values.
    """

    tag: str
    iteration: np.ndarray
    wall_time_s: np.ndarray
    value: np.ndarray


def read_scalars(run_dir: str | Path) -> dict[str, Series]:
    """Every scalar in the TensorBoard event files of ``run_dir``, by tag.

    Raises:
        NoEventsError: No event file, or no scalars in it.
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = Path(run_dir)
    if not any(run_dir.glob("events.out.tfevents.*")):
        raise NoEventsError(f"{run_dir} holds no TensorBoard event files (events.out.tfevents.*)")
    # size_guidance 0 keeps every event; the default keeps a 1,000-event sample per tag.
    accumulator = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    accumulator.Reload()
    tags = accumulator.Tags().get("scalars", [])
    if not tags:
        raise NoEventsError(f"the event files in {run_dir} hold no scalars (no iteration was logged yet)")
    start = accumulator.FirstEventTimestamp()
    series = {}
    for tag in tags:
        events = accumulator.Scalars(tag)
        series[tag] = Series(
            tag=tag,
            iteration=np.array([e.step for e in events], dtype=np.int64),
            wall_time_s=np.array([e.wall_time - start for e in events], dtype=np.float64),
            value=np.array([e.value for e in events], dtype=np.float64),
        )
    return series


def curve_groups(series: dict[str, Series]) -> dict[str, list[list[Series]]]:
    """The figures to draw: name → rows of series sharing a y axis (empty rows and figures left out)."""
    tags = sorted(series)
    figures = {
        "return": [[series[t] for t in tags if t == RETURN_TAG]],
        "episode_length": [[series[t] for t in tags if t == EPISODE_LENGTH_TAG]],
        "tracking": [
            [series[t] for t in tags if TRACKING_REWARD.match(t)],
            [series[t] for t in tags if TRACKING_ERROR.match(t)],
        ],
    }
    return {name: [row for row in rows if row] for name, rows in figures.items() if any(rows)}


_Y_LABELS = {
    RETURN_TAG: "mean return",
    EPISODE_LENGTH_TAG: "mean episode length (control steps)",
}


def write_training_curves(run_dir: str | Path, out_dir: str | Path | None = None, replace: bool = True) -> list[Path]:
    """Write ``return.png``, ``episode_length.png`` and ``tracking.png`` for a training run.

    Each figure plots its series against iteration (left) and wall time (right). Call it at the end
    of a run; it reads only the run's event files.

    Args:
        run_dir: The run folder (``logs/rsl_rl/<experiment>/<run>``).
        out_dir: Where to write; ``None``: ``<run_dir>/curves``.
        replace: Overwrite PNGs of the same names already in ``out_dir``; ``False`` refuses before writing any.

    Returns:
        The PNGs written (a figure whose series were never logged is left out).

    Raises:
        NoEventsError: The run has no scalars yet.
        OutputDirError: ``replace`` is off and a PNG to write already exists.
    """

    run_dir = Path(run_dir)
    out_dir = Path(out_dir) if out_dir is not None else run_dir / CURVES_DIR
    groups = curve_groups(read_scalars(run_dir))
    existing = [out_dir / f"{name}.png" for name in groups if (out_dir / f"{name}.png").exists()]
    if existing and not replace:
        raise OutputDirError(
            f"{', '.join(str(p) for p in existing)} already exist; pass --force to replace them, or give --out "
            "another folder"
        )
    return [
        _plot(rows, out_dir / f"{name}.png", f"{run_dir.parent.name}/{run_dir.name}: {name.replace('_', ' ')}")
        for name, rows in groups.items()
    ]


def _plot(rows: list[list[Series]], path: Path, title: str) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.2 * len(rows)))
    axes = fig.subplots(len(rows), 2, squeeze=False)
    for row, (by_iteration, by_time) in zip(rows, axes):
        for s in row:
            label = s.tag if len(row) > 1 else None
            by_iteration.plot(s.iteration, s.value, lw=1.2, label=label)
            by_time.plot(s.wall_time_s / 60.0, s.value, lw=1.2, label=label)
        ylabel = _Y_LABELS.get(
            row[0].tag,
            "tracking reward (per episode)" if TRACKING_REWARD.match(row[0].tag) else "tracking error (m/s, rad/s)",
        )
        for ax, xlabel in ((by_iteration, "iteration"), (by_time, "wall time (min)")):
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            if len(row) > 1:
                ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure_atomic(fig, path)

"""``linkage-lab deploy report``: a recording's timing table and a picture of the run.

The picture has three panels: joint tracking (each motor's target and measured angle over time, a few motors), the
loop-period histogram against the control period, and the safety state over time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.deploy.controller import STATES
from linkage_lab.deploy.recording import read_recording
from linkage_lab.deploy.timing import timing_table
from linkage_lab.io import save_figure_atomic

#: Motors drawn in the tracking panel (the first of each kind would do; these are actuator indices).
_TRACKED = 3


def load_run(path: str | Path) -> dict[str, Any]:
    """A recording as arrays: per stream its log times (s from the first message) and fields."""
    metadata, messages = read_recording(path)
    streams: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for topic, log_time, message in messages:
        streams.setdefault(topic, []).append((log_time, message))
    start = min((rows[0][0] for rows in streams.values() if rows), default=0)
    run: dict[str, Any] = {"metadata": metadata}
    for topic, rows in streams.items():
        run[topic] = {"t": np.array([(t - start) * 1e-9 for t, _ in rows]), "rows": [m for _, m in rows]}
    return run


def report(path: str | Path, png: str | Path | None = None) -> dict[str, Any]:
    """The timing table of a recording; writes the PNG (default: beside it, ``.png``).

    Raises:
        ValueError: Not a readable recording, or one without timing.
    """
    run = load_run(path)
    timing = run.get("/timing")
    if timing is None:
        raise ValueError(f"{path} has no /timing channel: not a deploy recording")
    rows = timing["rows"]
    column = lambda name: np.array([np.nan if r[name] is None else r[name] for r in rows], dtype=float)  # noqa: E731
    period_s = float(run["metadata"].get("control_period_s", 0.02))
    policy = column("policy_s")
    table = timing_table(
        {
            "period": column("period_s"),
            "sample_age": column("sample_age_s"),
            "latency": column("latency_s"),
            "policy": policy[policy > 0],
        },
        int(sum(bool(r["deadline_missed"]) for r in rows)),
        period_s,
    )
    states = run.get("/state", {"t": np.array([]), "rows": []})
    table["states"] = [
        {"t_s": float(t), "state": r["state"], "reason": r["reason"]} for t, r in zip(states["t"], states["rows"])
    ]
    table["ticks"] = len(rows)
    out = Path(png) if png is not None else Path(path).with_suffix(".png")
    _plot(run, column("period_s"), period_s, out)
    table["png"] = str(out)
    return table


def format_table(table: dict[str, Any]) -> str:
    """The timing table as text."""
    lines = [f"{'':<22}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'count':>8}"]
    names = {
        "period": "loop period",
        "sample_age": "sample age at tick",
        "latency": "sample -> target",
        "policy": "policy step",
    }
    for key, label in names.items():
        row = table.get(key)
        if row:
            lines.append(f"{label:<22}{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['max_ms']:>9.2f}{row['count']:>8}")
    verdict = table.get("period_p99_within_10pct")
    lines.append(
        f"deadline misses: {table['deadline_misses']} of {table.get('ticks', '?')} ticks; "
        f"period p99 within 10 % of {table['control_period_ms']:g} ms: {'yes' if verdict else 'no'}"
    )
    for change in table.get("states", []):
        lines.append(f"  {change['t_s']:8.2f} s  {change['state']:<11} {change['reason']}")
    return "\n".join(lines)


def _plot(run: dict[str, Any], periods: np.ndarray, period_s: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(9, 9))
    names = run["metadata"].get("motor_names", "").split(",")
    samples, targets = run.get("/sample"), run.get("/target")
    ax = axes[0]
    if samples and targets:
        measured = np.array([r["motor_pos_rad"] for r in samples["rows"]], dtype=float)
        wanted = np.array([r["pos"] for r in targets["rows"]], dtype=float)
        for k in range(min(_TRACKED, measured.shape[1])):
            (line,) = ax.plot(samples["t"], measured[:, k], label=f"{names[k] if k < len(names) else k} measured")
            ax.plot(targets["t"], wanted[:, k], "--", color=line.get_color(), label="target")
        ax.legend(fontsize=7, ncol=3)
    ax.set(xlabel="time (s)", ylabel="motor angle (rad)", title="Joint tracking")
    ax = axes[1]
    finite = periods[np.isfinite(periods)] * 1e3
    if len(finite):
        ax.hist(finite, bins=60, color="tab:blue")
    ax.axvline(1e3 * period_s, color="k", linestyle="--", label="control period")
    ax.set(xlabel="loop period (ms)", ylabel="ticks", title="Loop period")
    ax.legend(fontsize=7)
    ax = axes[2]
    states = run.get("/state")
    if targets:
        levels = [STATES.index(r["state"]) for r in targets["rows"]]
        ax.step(targets["t"], levels, where="post")
    if states:
        for t, r in zip(states["t"], states["rows"]):
            ax.annotate(r["reason"][:40], (t, STATES.index(r["state"])), fontsize=7, rotation=15)
    ax.set_yticks(range(len(STATES)), STATES)
    ax.set(xlabel="time (s)", title="Safety state")
    fig.tight_layout()
    save_figure_atomic(fig, out)
    plt.close(fig)

"""How a bundle's turn on the closed chain depends on the loop's latency, and on which velocity it observes.

Runs the bundle (``linkage_lab.sim2sim.runner.run_sim2sim``) at one turning command for each ``(observation,
action)`` delay pair, once with the robot-side velocity estimate and once with the model's true base velocity
(``--io-option base_velocity=truth``), and reports each run's mean yaw rate, mean forward speed and falls. The
reality-gap sweep's latency rows split their delay between the sample and the target; this separates the two.

Run ``python -m linkage_lab_experiments.turn.latency_turn --bundle B [--command 0.4,0.2] [--duration 20]
[--delays 0,0 0,20 ...] [--out DIR]``; writes ``latency_turn.json`` and ``latency_turn.png`` to DIR.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float

#: ``(observation, action)`` delays (ms): none, 20 ms and 40 ms of loop latency, each in the sample, in the
#: target, and (40 ms) split as the reality-gap sweep splits it.
DEFAULT_DELAYS_MS = ((0, 0), (20, 0), (0, 20), (40, 0), (0, 40), (20, 20))
#: The velocity each run's policy observes: the robot side's estimate, and the model's truth for comparison.
VELOCITY_SOURCES = ("estimate", "truth")


def delay_pair(text: str) -> tuple[float, float]:
    """``"OBS,ACTION"`` in ms → a pair of non-negative floats."""
    try:
        obs, action = (float(part) for part in text.split(","))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected OBS_MS,ACTION_MS, got {text!r}") from error
    if not (obs >= 0.0 and action >= 0.0):
        raise argparse.ArgumentTypeError(f"delays must be non-negative ms, got {text!r}")
    return obs, action


def measure(
    bundle: Path, command: tuple[float, float], duration_s: float, delays_ms: Sequence[tuple[float, float]]
) -> list[dict[str, Any]]:
    """One row per velocity source and delay pair: the delays, the mean yaw rate and speed, and falls."""
    from linkage_lab.sim2sim.runner import run_sim2sim

    rows = []
    for source in VELOCITY_SOURCES:
        options = {"base_velocity": "truth"} if source == "truth" else None
        for obs_ms, action_ms in delays_ms:
            report = run_sim2sim(
                bundle,
                command=command,
                duration_s=duration_s,
                io_options=options,
                delays_s=(obs_ms / 1000.0, action_ms / 1000.0),
            )
            tracking = report["tracking"]
            rows.append(
                {
                    "velocity": source,
                    "obs_delay_ms": obs_ms,
                    "action_delay_ms": action_ms,
                    "mean_yaw_rate_radps": tracking["mean_yaw_rate_radps"],
                    "mean_forward_speed_mps": tracking["mean_forward_speed_mps"],
                    "falls": report["falls"],
                }
            )
            print(
                f"{source:8s} obs {obs_ms:4.0f} ms, action {action_ms:4.0f} ms: yaw rate "
                f"{tracking['mean_yaw_rate_radps']:+.3f} rad/s, speed {tracking['mean_forward_speed_mps']:.3f} m/s, "
                f"falls {report['falls']}",
                flush=True,
            )
    return rows


def plot(rows: list[dict[str, Any]], command: tuple[float, float], path: Path) -> None:
    """Mean yaw rate and mean forward speed against the total latency, per velocity source, marked by where the
    delay sits."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    fig = Figure(figsize=(13, 4.2))
    panels = (
        ("mean_yaw_rate_radps", "mean yaw rate (rad/s)", command[1], "acceptance ±0.05"),
        ("mean_forward_speed_mps", "mean forward speed (m/s)", command[0], None),
    )
    markers = {"sample": "o", "target": "s", "split": "D"}
    for ax, (key, ylabel, commanded, band) in zip(fig.subplots(1, 2), panels, strict=True):
        for color, source in zip(("tab:blue", "tab:orange"), VELOCITY_SOURCES, strict=True):
            for where, marker in markers.items():
                picked = [r for r in rows if r["velocity"] == source and _where(r) in (where, "none")]
                picked.sort(key=lambda r: r["obs_delay_ms"] + r["action_delay_ms"])
                if len(picked) < 2:
                    continue
                ax.plot(
                    [r["obs_delay_ms"] + r["action_delay_ms"] for r in picked],
                    [r[key] for r in picked],
                    marker=marker,
                    color=color,
                    lw=1.2,
                    label=f"{source}, delay " + ("split evenly" if where == "split" else f"in the {where}"),
                )
        ax.axhline(commanded, color="k", ls="--", lw=1, label="command")
        if band is not None:
            ax.axhspan(commanded - 0.05, commanded + 0.05, color="0.9", zorder=0, label=band)
        ax.set(xlabel="loop latency, sample + target (ms)", ylabel=ylabel)
        ax.legend(fontsize=8)
    fig.suptitle(f"turning at {command[1]:+.2f} rad/s, walking {command[0]:.2f} m/s (closed chain)")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=110)


def _where(row: dict[str, Any]) -> str:
    obs, action = row["obs_delay_ms"], row["action_delay_ms"]
    if obs == 0 and action == 0:
        return "none"
    if obs and action:
        return "split"
    return "sample" if obs else "target"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--command", default="0.4,0.2", help="VX,WZ (m/s, rad/s)")
    parser.add_argument("--duration", type=finite_float, default=20.0, help="simulated seconds per run")
    parser.add_argument("--delays", type=delay_pair, nargs="+", help="OBS_MS,ACTION_MS pairs (default: six)")
    parser.add_argument("--out", type=Path, default=Path("outputs") / "latency_turn")
    args = parser.parse_args(argv)
    try:
        vx, wz = (float(part) for part in args.command.split(","))
    except ValueError:
        parser.error(f"--command expects VX,WZ, got {args.command!r}")

    from linkage_lab.io import write_json_atomic

    delays = args.delays or DEFAULT_DELAYS_MS
    rows = measure(args.bundle, (vx, wz), args.duration, delays)
    args.out.mkdir(parents=True, exist_ok=True)
    document = {"bundle": str(args.bundle), "command": [vx, wz], "duration_s": args.duration, "runs": rows}
    write_json_atomic(args.out / "latency_turn.json", document)
    plot(rows, (vx, wz), args.out / "latency_turn.png")
    print(f"wrote {args.out / 'latency_turn.json'} and {args.out / 'latency_turn.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

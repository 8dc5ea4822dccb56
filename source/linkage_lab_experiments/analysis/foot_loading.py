"""Which feet carry a robot: each foot's duty factor in several evaluations, side by side.

An evaluation's ``eval.json`` (``linkage-lab eval``) or a closed-chain ``sim2sim.json`` records, per foot, the share
of the control steps it touches the ground (``footfalls.feet[].duty_factor``) and the share with no foot down
(``flight_share``). A policy that holds a leg up shows as a foot near 0.

Run ``python -m linkage_lab_experiments.analysis.foot_loading LABEL=REPORT.json [...] --out DIR``; writes
``foot_loading.json`` and ``foot_loading.png`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def read_loading(path: str | Path) -> dict[str, Any]:
    """The feet's duty factors, the flight share and the alternation of one report.

    Raises:
        ValueError: Unreadable, not JSON, or a report without per-foot footfalls.
    """
    try:
        footfalls = json.loads(Path(path).read_text()).get("footfalls") or {}
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise ValueError(f"{path}: cannot read a report: {exc}") from None
    feet = footfalls.get("feet") or []
    if not feet or any(foot.get("duty_factor") is None for foot in feet):
        raise ValueError(f"{path}: no per-foot duty factors under 'footfalls'")
    return {
        "duty_factor": {foot["body"]: float(foot["duty_factor"]) for foot in feet},
        "flight_share": footfalls.get("flight_share"),
        "alternation": footfalls.get("alternation"),
    }


def compare(reports: dict[str, str | Path]) -> dict[str, Any]:
    """``label → report path`` read into ``foot_loading.json``'s document (labels in the given order)."""
    return {"rows": {label: read_loading(path) for label, path in reports.items()}}


def format_table(document: dict[str, Any]) -> str:
    """The duty factors per foot, the flight share and the alternation, one line per report."""
    rows = document["rows"]
    feet = list(next(iter(rows.values()))["duty_factor"]) if rows else []
    width = max([len(label) for label in rows] + [6])
    lines = [f"{'report':<{width}} " + " ".join(f"{foot:>8}" for foot in feet) + "   flight  alternation"]
    for label, row in rows.items():
        duties = " ".join(f"{row['duty_factor'].get(foot, float('nan')):>8.3f}" for foot in feet)
        flight, alternation = row["flight_share"], row["alternation"]
        lines.append(
            f"{label:<{width}} {duties}   {'-' if flight is None else f'{flight:6.3f}'}  "
            f"{'-' if alternation is None else f'{alternation:11.3f}'}"
        )
    return "\n".join(lines)


def plot(document: dict[str, Any], path: Path, min_duty_factor: float | None = None) -> None:
    """Grouped bars: per foot, each report's duty factor; a dashed line at ``min_duty_factor``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from linkage_lab.io import save_figure_atomic

    rows = document["rows"]
    feet = list(next(iter(rows.values()))["duty_factor"])
    width = 0.8 / len(rows)
    figure, axis = plt.subplots(figsize=(9, 3.5))
    for k, (label, row) in enumerate(rows.items()):
        offset = (k - (len(rows) - 1) / 2) * width
        values = [row["duty_factor"].get(foot, 0.0) for foot in feet]
        axis.bar([i + offset for i in range(len(feet))], values, width, label=label)
    if min_duty_factor is not None:
        axis.axhline(min_duty_factor, color="black", linestyle="--", linewidth=0.8, label="acceptance")
    axis.set_xticks(range(len(feet)), feet)
    axis.set_ylim(0.0, 1.0)
    axis.set_ylabel("duty factor (share of the time down)")
    axis.set_title("Which feet carry the robot")
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    save_figure_atomic(figure, path)
    plt.close(figure)


def _labelled(text: str) -> tuple[str, str]:
    label, sep, path = text.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=REPORT.json, got {text!r}")
    return label, path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", type=_labelled, nargs="+", metavar="LABEL=REPORT.json")
    parser.add_argument("--min-duty-factor", type=float, default=None, help="draw the acceptance's mark")
    parser.add_argument("--out", default="outputs/foot_loading", help="output folder")
    args = parser.parse_args(argv)
    from linkage_lab_experiments.results import write_result

    try:
        document = compare(dict(args.reports))
    except ValueError as exc:
        parser.exit(2, f"error: {exc}\n")
    print(format_table(document))
    write_result(args.out, "foot_loading", document, lambda path: plot(document, path, args.min_duty_factor))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How a Limit bundle's turn on the spot on the closed chain depends on how stiff its feet meet the floor.

Isaac Lab's Newton scene gives every shape ``ke`` 160000 N/m and ``kd`` 1100 N·s/m, which MuJoCo-Warp applies as a
contact ``solref`` of (0.01 s, 1.375) at the Limit's 5 ms step; the closed-chain model keeps MuJoCo's default
(0.02 s, 1.0): half as stiff. This runs the bundle at each turning command on the closed chain on the model's true
velocity and exact sensors (the velocity estimator and the noise out of the comparison), once with each contact
``solref``, from rest and with the sweep's start kicks, and reports the yaw RMS, the mean yaw rate and the least
duty factor of each.

The Isaac Lab side of the same question is ``linkage-lab eval --sweep`` with the nominal overrides and
``env.sim.physics.default_shape_cfg.ke=2500 env.sim.physics.default_shape_cfg.kd=100`` (Newton's shape gains that
give MuJoCo's default ``solref``).

Run ``python -m linkage_lab_experiments.turn.contact_stiffness --bundle B [--duration 20] [--episodes 2]
[--out DIR]``; writes ``contact_stiffness.json`` and ``contact_stiffness.png`` to DIR.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float
from linkage_lab_experiments.results import write_result
from linkage_lab_experiments.validation.closed_chain_speed import ISAAC_LAB_CONTACT_SOLREF

#: The turning commands (m/s, rad/s): the Limit's acceptance turns on the spot.
TURN_COMMANDS = ((0.0, 0.3), (0.0, -0.3))
#: ``(label, contact solref or None for the model's own)`` of each variant, the closed chain's first.
CONTACTS = (
    ("closed chain's (MuJoCo default 0.02 s, 1.0)", None),
    ("Isaac Lab's (0.01 s, 1.375)", ISAAC_LAB_CONTACT_SOLREF),
)


def pooled_rms(values: Sequence[float]) -> float:
    """The RMS of equally long runs pooled: the root of their mean square."""
    if not values:
        raise ValueError("no runs to pool")
    return math.sqrt(sum(v * v for v in values) / len(values))


def measure(bundle: Path, duration_s: float, episodes: int) -> dict[str, Any]:
    """Run every contact variant at every turning command; returns the ``contact_stiffness.json`` document."""
    from linkage_lab.sim2sim.runner import run_sim2sim
    from linkage_lab.sim2sim.stress import PhysicsStress
    from linkage_lab.sim2sim.sweep import episode_kicks

    kicks = episode_kicks(episodes, 0)
    rows = []
    for label, solref in CONTACTS:
        stress = None if solref is None else PhysicsStress(contact_solref=solref)
        for command in TURN_COMMANDS:
            runs = [
                run_sim2sim(
                    bundle,
                    command,
                    duration_s,
                    io_options={"base_velocity": "truth"},
                    sensor_noise=None,
                    base_kick=kick,
                    stress=stress,
                )
                for kick in kicks
            ]
            row = {
                "contacts": label,
                "contact_solref": None if solref is None else list(solref),
                "command": list(command),
                "runs": len(runs),
                "falls": sum(run.get("fall") is not None for run in runs),
                "yaw_rate_rms_radps": pooled_rms([run["tracking"]["yaw_rate_rms_radps"] for run in runs]),
                "mean_yaw_rate_radps": sum(run["tracking"]["mean_yaw_rate_radps"] for run in runs) / len(runs),
                "min_duty_factor": min(f["duty_factor"] for run in runs for f in run["footfalls"]["feet"]),
            }
            rows.append(row)
            print(
                f"{label:45s} {command[1]:+.2f} rad/s: yaw RMS {row['yaw_rate_rms_radps']:.3f}, "
                f"mean {row['mean_yaw_rate_radps']:+.3f}, least duty {row['min_duty_factor']:.2f}, "
                f"falls {row['falls']}",
                flush=True,
            )
    return {"bundle": str(bundle), "duration_s": duration_s, "episodes": episodes, "rows": rows}


def plot(document: dict[str, Any], path: Path) -> Path:
    """Yaw RMS per contact variant, one group of bars per turning command."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from linkage_lab.io import save_figure_atomic

    rows = document["rows"]
    labels = [label for label, _ in CONTACTS]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(labels)
    for index, label in enumerate(labels):
        values = [r["yaw_rate_rms_radps"] for r in rows if r["contacts"] == label]
        ax.bar([c + index * width for c in range(len(TURN_COMMANDS))], values, width, label=label)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(TURN_COMMANDS))])
    ax.set_xticklabels([f"{wz:+.1f} rad/s on the spot" for _, wz in TURN_COMMANDS])
    ax.set_ylabel("yaw-rate RMS (rad/s)")
    ax.set_title(f"{Path(document['bundle']).name}: closed chain, true velocity, by contact stiffness")
    ax.legend(fontsize=8)
    path = save_figure_atomic(fig, path)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="an exported Limit bundle folder")
    parser.add_argument("--duration", type=finite_float, default=20.0, help="simulated seconds per run (default 20)")
    parser.add_argument("--episodes", type=int, default=2, help="runs per command (default 2)")
    parser.add_argument("--out", type=Path, default=Path("outputs/experiments/contact_stiffness"))
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")
    document = measure(args.bundle, args.duration, args.episodes)
    write_result(args.out, "contact_stiffness", document, lambda path: plot(document, path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

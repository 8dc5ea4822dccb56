"""How a bundle's walk on its estimate depends on the loop's latency, per setting of the estimator's landing rule.

The robot's loop is never instant: the deploy runtime measured 2-22 ms from sample to target on the Limit
(docs/results/2026-12-03_deploy_runtime.md), and a latency shifts the feet's landings against the control ticks
the estimator samples them on. This runs the bundle on the closed chain (the policy on the robot-side estimate,
the robot's sensor noise) at each forward command and each target delay, once per variant of the estimator's
settings (a copy of the bundle with its ``base_velocity.json`` changed) and of how often it steps (once per tick,
or on every physics step's sample: ``sim2sim --io-option estimator_rate``), and
reports each run's speed, lin-vel RMS, the estimate's bias and noise along x and the feet it used per tick. Each
run also checks the estimator's contact rule against the model's contacts (``estimator_touchdown``'s recording): the
share of the feet it counted as planted that were in the air, the upward force their legs' torques implied (median,
against the feet on the ground), and the base velocity those airborne feet implied (world x, minus the truth).

Run ``python -m linkage_lab_experiments.validation.estimator_latency --bundle B [--commands -0.3 0 0.3 0.5]
[--delays-ms 0 4 8 12 16 20] [--variant NAME=KEY:VALUE,... ...] [--duration 20] [--out DIR]``; writes
``estimator_latency.json`` and ``estimator_latency.png`` to DIR.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.arguments import finite_float

#: The estimator settings a variant may change (``base_velocity.json``'s ``cfg``), and how often it steps.
VARIANT_KEYS = {
    "settle_updates": int,
    "settling_noise_scale": float,
    "foot_noise_mps": float,
    "gate_fallback": lambda text: {"true": True, "false": False}[text.lower()],
    "estimator_rate": str,
}
#: The variants compared by default: (name, the changes to the bundle's estimator).
DEFAULT_VARIANTS = (
    ("left out until settled", {"settle_updates": 1}),
    ("landing at twice the noise", {"settle_updates": 1, "settling_noise_scale": 2.0}),
    ("counted from landing", {"settle_updates": 0}),
)
DEFAULT_COMMANDS = (-0.3, 0.0, 0.3, 0.5)
DEFAULT_DELAYS_MS = (0.0, 4.0, 8.0, 12.0, 16.0, 20.0)


def variant(text: str) -> tuple[str, dict[str, Any]]:
    """``"NAME=KEY:VALUE,..."`` → ``(name, {key: value})``, keys from :data:`VARIANT_KEYS` (``estimator_rate``:
    ``tick`` or ``sample``, see ``sim2sim --io-option estimator_rate``)."""
    from linkage_lab.sim2sim.velocity_source import ESTIMATOR_RATES

    name, sep, rest = text.partition("=")
    changes: dict[str, Any] = {}
    try:
        if not sep or not name or not rest:
            raise ValueError
        for item in rest.split(","):
            key, colon, value = item.partition(":")
            if not colon or key not in VARIANT_KEYS or key in changes:
                raise ValueError
            try:
                changes[key] = VARIANT_KEYS[key](value)
            except KeyError:
                raise ValueError from None
        scale, settle = changes.get("settling_noise_scale"), changes.get("settle_updates", 0)
        noise = changes.get("foot_noise_mps", 1.0)
        if settle < 0 or not (math.isfinite(noise) and noise > 0):
            raise ValueError
        if scale is not None and not (math.isfinite(scale) and scale >= 1.0):
            raise ValueError
        if changes.get("estimator_rate", "tick") not in ESTIMATOR_RATES:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a variant is NAME=KEY:VALUE,... with keys {', '.join(VARIANT_KEYS)} (settle_updates >= 0, "
            f"settling_noise_scale >= 1, foot_noise_mps > 0, gate_fallback true or false, "
            f"estimator_rate {' or '.join(ESTIMATOR_RATES)}); got {text!r}"
        ) from None
    return name, changes


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def summarize(rows: Sequence[dict[str, Any]], target_rms_mps: float) -> list[dict[str, Any]]:
    """Per variant: its runs' mean lin-vel RMS, worst RMS, runs over ``target_rms_mps``, mean |bias| and falls."""
    names = list(dict.fromkeys(row["variant"] for row in rows))
    summary = []
    for name in names:
        picked = [row for row in rows if row["variant"] == name]
        rms = [row["lin_vel_xy_rms_mps"] for row in picked]
        summary.append(
            {
                "variant": name,
                "runs": len(picked),
                "mean_rms_mps": sum(rms) / len(rms),
                "worst_rms_mps": max(rms),
                "runs_over_target": sum(value > target_rms_mps for value in rms),
                "mean_abs_bias_x_mps": sum(abs(row["estimate_bias_x_mps"]) for row in picked) / len(picked),
                "falls": sum(row["falls"] for row in picked),
            }
        )
    return summary


def _finite_median(values: np.ndarray) -> float | None:
    """The median of the finite ``values``; ``None`` when there are none."""
    return float(np.nanmedian(values)) if np.isfinite(values).any() else None


def airborne_feet(ticks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """From ``estimator_touchdown.estimator_ticks``'s records: how many feet the contact rule counted, the share of
    them in the air, the median upward force (N) the legs' torques implied on feet in the air and on the ground, and
    the mean error (m/s, world x) of the velocity the counted airborne feet implied."""
    counted = np.array([t["counted"] for t in ticks], dtype=bool)
    contact = np.array([t["contact"] for t in ticks], dtype=bool)
    force = np.array([t["ground_force_n"] for t in ticks], dtype=float)
    error = np.array([t["implied_w"][:, 0] - t["truth_w"][0] for t in ticks])
    in_air = counted & ~contact
    return {
        "counted_feet": int(counted.sum()),
        "counted_in_air_share": float(in_air.sum() / counted.sum()) if counted.any() else None,
        "force_in_air_median_n": _finite_median(force[~contact]),
        "force_on_ground_median_n": _finite_median(force[contact]),
        "counted_in_air_error_x_mps": float(error[in_air].mean()) if in_air.any() else None,
    }


def measure(
    bundle: Path,
    variants: Sequence[tuple[str, dict[str, Any]]],
    commands: Sequence[float],
    delays_ms: Sequence[float],
    duration_s: float,
) -> list[dict[str, Any]]:
    """One row per variant, command and target delay (module docstring)."""
    import json
    import shutil
    import tempfile

    from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE
    from linkage_lab.sim2sim.runner import ROBOT_SENSORS, run_sim2sim
    from linkage_lab_experiments.validation.estimator_touchdown import estimator_ticks

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, changes) in enumerate(variants):
            copy = Path(tmp) / f"variant_{k}"
            shutil.copytree(bundle, copy)
            document = json.loads((copy / ESTIMATOR_FILE).read_text())
            document["cfg"].update({key: value for key, value in changes.items() if key != "estimator_rate"})
            (copy / ESTIMATOR_FILE).write_text(json.dumps(document))
            rate = changes.get("estimator_rate", "tick")
            for command in commands:
                for delay in delays_ms:
                    ticks: list[dict[str, Any]] = []
                    with estimator_ticks(ticks):
                        report = run_sim2sim(
                            copy,
                            command=(command, 0.0),
                            duration_s=duration_s,
                            delays_s=(0.0, delay / 1000.0),
                            sensor_noise=ROBOT_SENSORS,
                            io_options={"estimator_rate": rate} if rate != "tick" else None,
                        )
                    tracking, estimate = report["tracking"], report["robot_side"]["base_velocity"]
                    row = {
                        "variant": name,
                        "estimator": {"estimator_rate": rate, **document["cfg"]},
                        "command_mps": command,
                        "action_delay_ms": delay,
                        "mean_forward_speed_mps": tracking["mean_forward_speed_mps"],
                        "lin_vel_xy_rms_mps": tracking["lin_vel_xy_rms_mps"],
                        "estimate_bias_x_mps": estimate["estimate_bias_mps"]["x"],
                        "estimate_noise_x_mps": estimate["estimate_noise_mps"]["x"],
                        "mean_feet_used": estimate["mean_feet_used"],
                        "falls": report["falls"],
                        "contact_rule": airborne_feet(ticks),
                    }
                    rows.append(row)
                    print(
                        f"{name:28s} {command:+.2f} m/s, {delay:4.0f} ms: speed {row['mean_forward_speed_mps']:+.3f}, "
                        f"RMS {row['lin_vel_xy_rms_mps']:.3f}, estimate bias {row['estimate_bias_x_mps']:+.3f} "
                        f"noise {row['estimate_noise_x_mps']:.3f}, feet {row['mean_feet_used']:.2f}, "
                        f"counted in the air {_share(row['contact_rule']['counted_in_air_share'])}, "
                        f"falls {row['falls']}",
                        flush=True,
                    )
    return rows


def plot(rows: Sequence[dict[str, Any]], target_rms_mps: float, path: Path) -> None:
    """Per command: lin-vel RMS against the target delay, one line per variant, the target dashed."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    commands = list(dict.fromkeys(row["command_mps"] for row in rows))
    names = list(dict.fromkeys(row["variant"] for row in rows))
    fig = Figure(figsize=(4.2 * len(commands), 3.8))
    for ax, command in zip(fig.subplots(1, len(commands), squeeze=False)[0], commands, strict=True):
        for name in names:
            picked = sorted(
                (row for row in rows if row["variant"] == name and row["command_mps"] == command),
                key=lambda row: row["action_delay_ms"],
            )
            ax.plot(
                [row["action_delay_ms"] for row in picked],
                [row["lin_vel_xy_rms_mps"] for row in picked],
                marker="o",
                lw=1.2,
                label=name,
            )
        ax.axhline(target_rms_mps, color="k", ls="--", lw=1, label="closed-chain target")
        ax.set(xlabel="targets late by (ms)", ylabel="lin-vel RMS (m/s)", title=f"walk at {command:+.2f} m/s")
    fig.axes[0].legend(fontsize=8)
    fig.suptitle("the policy on its estimate, closed chain: the estimator's settings against the loop's latency")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--commands", type=finite_float, nargs="+", default=list(DEFAULT_COMMANDS), help="m/s")
    parser.add_argument("--delays-ms", type=finite_float, nargs="+", default=list(DEFAULT_DELAYS_MS))
    parser.add_argument(
        "--variant", type=variant, action="append", help="NAME=KEY:VALUE,... (repeatable; default: three)"
    )
    parser.add_argument("--duration", type=finite_float, default=20.0, help="simulated seconds per run")
    parser.add_argument("--target-rms", type=finite_float, default=0.08, help="the closed-chain lin-vel target")
    parser.add_argument("--out", type=Path, default=Path("outputs") / "estimator_latency")
    args = parser.parse_args(argv)
    if any(delay < 0 for delay in args.delays_ms):
        parser.error(f"--delays-ms must be >= 0, got {args.delays_ms}")
    if not args.duration > 0:
        parser.error(f"--duration must be positive, got {args.duration}")

    from linkage_lab.io import write_json_atomic

    variants = args.variant or list(DEFAULT_VARIANTS)
    rows = measure(args.bundle, variants, args.commands, args.delays_ms, args.duration)
    summary = summarize(rows, args.target_rms)
    args.out.mkdir(parents=True, exist_ok=True)
    document = {
        "bundle": str(args.bundle),
        "duration_s": args.duration,
        "target_rms_mps": args.target_rms,
        "summary": summary,
        "runs": rows,
    }
    write_json_atomic(args.out / "estimator_latency.json", document)
    plot(rows, args.target_rms, args.out / "estimator_latency.png")
    for row in summary:
        print(
            f"{row['variant']:28s} mean RMS {row['mean_rms_mps']:.3f}, worst {row['worst_rms_mps']:.3f}, "
            f"{row['runs_over_target']} of {row['runs']} runs over {args.target_rms}, mean |bias| "
            f"{row['mean_abs_bias_x_mps']:.3f}, falls {row['falls']}"
        )
    print(f"wrote {args.out / 'estimator_latency.json'} and {args.out / 'estimator_latency.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

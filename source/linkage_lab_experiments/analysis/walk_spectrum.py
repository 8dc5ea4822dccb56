"""Where a walking policy's lin-vel error comes from: its mean, each episode's own offset, and its swing by band.

The acceptance's lin-vel RMS error squares, per base axis, three things together: the mean error over all
envs (a bias), how far each env's mean sits from that mean (an offset that lasts the episode: a per-episode
draw such as the velocity estimate's randomised bias, or a heavier body), and how much each env's velocity
swings about its own mean. With ``e = c − v`` over ``T`` steps of ``E`` envs,
``mean(e²) = mean(e)² + var_E(mean_T(e)) + mean_E(var_T(v))`` per axis, and the two axes add. The swing is
split into the yaw spectrum's bands (:data:`~linkage_lab_experiments.turn.yaw_spectrum.BANDS_HZ`).

This evaluates a policy in its task at fixed forward-speed commands (the sweep's settings: pushes, latency,
randomised constants and the estimate's error on) and records every env's base-frame velocity each control step.

Run ``python -m linkage_lab_experiments.analysis.walk_spectrum --task T --checkpoint C [--speed 0.3 ...]
[--out DIR] [overrides]``; writes ``walk_spectrum.json`` and ``walk_spectrum.png`` to DIR and prints the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.arguments import finite_float
from linkage_lab_experiments.turn.yaw_spectrum import (
    BANDS_HZ,
    band_label,
    record_case,
    run_spectrum,
    spectrum_parser,
    swing_bands,
    write_spectrum,
)

AXES = ("x", "y")


def decompose_walk(command_mps: float, velocity: np.ndarray, dt_s: float, settle_steps: int) -> dict[str, Any]:
    """Bias, episode offsets and swing by band of ``(T, E, 2)`` base-frame planar velocities after ``settle_steps``.

    Per axis: ``bias`` is the pooled mean error; ``offsets`` the RMS of each env's mean error about it; ``swing``
    the RMS of each env's velocity about its own mean, pooled, and ``swing_by_band`` its split
    (:func:`~linkage_lab_experiments.turn.yaw_spectrum.swing_bands`). ``rms_error_mps`` is the acceptance's RMS of
    ``‖c − v‖`` over the steady samples; its square is the sum of the six parts' squares.
    """
    steady = np.asarray(velocity, dtype=float)[settle_steps:]
    if steady.ndim != 3 or steady.shape[2] != 2:
        raise ValueError(f"expected (T, E, 2) planar velocities, got shape {np.shape(velocity)}")
    if steady.shape[0] < 8:
        raise ValueError(f"{steady.shape[0]} steady samples: too few for a spectrum")
    error = np.array([command_mps, 0.0]) - steady
    axes = {}
    for k, axis in enumerate(AXES):
        env_means = error[:, :, k].mean(axis=0)
        per_env = [swing_bands(steady[:, env, k], dt_s) for env in range(steady.shape[1])]
        axes[axis] = {
            "bias_mps": float(env_means.mean()),
            "offsets_mps": float(env_means.std()),
            "swing_mps": float(np.sqrt(steady[:, :, k].var(axis=0).mean())),
            "swing_by_band_mps": [float(np.sqrt(np.mean(np.square(col)))) for col in zip(*per_env, strict=True)],
        }
    return {
        "command_mps": command_mps,
        "mean_forward_speed_mps": float(steady[:, :, 0].mean()),
        "rms_error_mps": float(np.sqrt((error**2).sum(axis=2).mean())),
        "bands_hz": [[lo, None if np.isinf(hi) else hi] for lo, hi in BANDS_HZ],
        "axes": axes,
    }


def record_walk(
    task: str, checkpoint: Path, speed_mps: float, num_envs: int, steps: int, overrides: list[str]
) -> np.ndarray:
    """``(T, E, 2)`` base-frame planar velocities (m/s) of ``num_envs`` envs walking at ``speed_mps``."""
    from linkage_lab.evaluation.sweep import CommandCase

    def planar_velocity_b(data: Any) -> Any:
        return data.root_lin_vel_b.torch[:, :2]

    return record_case(task, checkpoint, CommandCase(speed_mps), num_envs, steps, planar_velocity_b, overrides)


def _parts(row: dict[str, Any]) -> tuple[list[str], list[float]]:
    """Each part's name and RMS (m/s): per axis its bias, offsets and swing by band."""
    names, values = [], []
    for axis in AXES:
        part = row["axes"][axis]
        names += [f"{axis} bias", f"{axis} offsets"]
        values += [abs(part["bias_mps"]), part["offsets_mps"]]
        for (lo, hi), value in zip(row["bands_hz"], part["swing_by_band_mps"], strict=True):
            names.append(f"{axis} {band_label(lo, hi)}")
            values.append(value)
    return names, values


def plot(rows: list[dict[str, Any]], traces: list[np.ndarray], dt_s: float, path: Path) -> None:
    """Per command: a 2 s trace of env 0's forward and lateral velocity, and the error's parts."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    fig = Figure(figsize=(12, 3.4 * len(rows)))
    axes = fig.subplots(len(rows), 2, squeeze=False)
    for (trace_ax, part_ax), row, trace in zip(axes, rows, traces, strict=True):
        window = trace[-int(round(2.0 / dt_s)) :, 0]
        t = np.arange(window.shape[0]) * dt_s
        trace_ax.plot(t, window[:, 0], lw=1.2, label="forward, env 0")
        trace_ax.plot(t, window[:, 1], lw=1.0, label="lateral, env 0")
        trace_ax.axhline(row["command_mps"], color="k", ls="--", lw=1, label="command")
        trace_ax.set(xlabel="time (s), last 2 s", ylabel="m/s", title=f"walk at {row['command_mps']:+.2f} m/s")
        trace_ax.legend(loc="upper right", fontsize=8)
        names, values = _parts(row)
        colors = ["tab:red", "tab:purple"] + ["tab:orange"] * len(BANDS_HZ)
        part_ax.bar(names, values, color=colors * len(AXES))
        part_ax.tick_params(axis="x", labelrotation=60, labelsize=8)
        part_ax.set(ylabel="RMS (m/s)", title=f"RMS error {row['rms_error_mps']:.3f}: its parts add in squares")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = spectrum_parser(__doc__.splitlines()[0], Path("outputs") / "walk_spectrum")
    parser.add_argument("--speed", type=finite_float, action="append", help="m/s (repeatable; default 0 and 0.3)")
    args = parser.parse_args(argv)
    rows, traces, dt = run_spectrum(parser, args, args.speed or (0.0, 0.3), record_walk, decompose_walk)
    path = write_spectrum(args, rows, "walk_spectrum")
    plot(rows, traces, dt, args.out / "walk_spectrum.png")
    bands = " / ".join(band_label(lo, hi) for lo, hi in BANDS_HZ)
    for row in rows:
        speed, rms = row["mean_forward_speed_mps"], row["rms_error_mps"]
        print(f"{row['command_mps']:+.2f} m/s: mean {speed:+.3f}, RMS error {rms:.3f}")
        for axis in AXES:
            part = row["axes"][axis]
            swing = " / ".join(f"{value:.3f}" for value in part["swing_by_band_mps"])
            print(
                f"  {axis}: bias {part['bias_mps']:+.3f}, episode offsets {part['offsets_mps']:.3f}, swing "
                f"{part['swing_mps']:.3f} (by band {bands}: {swing})"
            )
    print(f"wrote {path} and {args.out / 'walk_spectrum.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

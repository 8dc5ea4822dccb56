"""Where a turning policy's yaw-rate error comes from: its mean, and its swing by frequency band.

The acceptance's yaw-rate RMS error on a turn command squares two things together: how far the mean
yaw rate is from the command (a bias) and how much the yaw rate swings about its mean. With ``e = c − ω``,
``mean(e²) = mean(e)² + var(ω)`` per env. This evaluates a policy in its task at fixed yaw-rate commands
(:func:`linkage_lab.evaluation.evaluate.evaluate`, the sweep's settings: pushes and randomisation on),
records every env's yaw rate each control step, and splits the swing of each env's steady part (after
``--settle-s``) into frequency bands with a periodogram: slow steering, the stepping, and what is faster
than any step (contact chatter, the drives' own ringing).

Run ``python -m linkage_lab_experiments.turn.yaw_spectrum --task T --checkpoint C [--yaw-rate 0.3 ...]
[--frame base|world] [--out DIR]``; writes ``yaw_spectrum.json`` and ``yaw_spectrum.png`` to DIR and prints the table.
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.arguments import finite_float

#: Frequency bands of the swing (Hz): steering, stepping, faster than a step, near the control rate's Nyquist.
BANDS_HZ = ((0.0, 3.0), (3.0, 6.0), (6.0, 12.0), (12.0, math.inf))


def band_label(low_hz: float, high_hz: float | None) -> str:
    """A band's name, e.g. ``"3-6 Hz"``, or ``">12 Hz"`` for one without an upper edge (``None`` or infinite)."""
    return f">{low_hz:g} Hz" if high_hz is None or math.isinf(high_hz) else f"{low_hz:g}-{high_hz:g} Hz"


def swing_bands(yaw_rate: np.ndarray, dt_s: float, bands: Sequence[tuple[float, float]] = BANDS_HZ) -> list[float]:
    """RMS of ``yaw_rate`` about its mean carried by each band (rad/s); their squares sum to its variance.

    Args:
        yaw_rate: ``(T,)`` samples, ``dt_s`` apart.
        dt_s: Sample period (s).
        bands: ``(low, high)`` in Hz, half-open ``[low, high)``, covering ``[0, ∞)`` without overlap.
    """
    x = np.asarray(yaw_rate, dtype=float)
    x = x - x.mean()
    n = x.size
    spectrum = np.abs(np.fft.rfft(x)) ** 2 / n**2
    # One-sided: every bin but DC (and Nyquist for even n) stands for two bins of the two-sided sum.
    spectrum[1 : n // 2 + (n % 2)] *= 2.0
    freqs = np.fft.rfftfreq(n, dt_s)
    return [float(np.sqrt(spectrum[(freqs >= lo) & (freqs < hi)].sum())) for lo, hi in bands]


def decompose(command: float, yaw_rate: np.ndarray, dt_s: float, settle_steps: int) -> dict[str, Any]:
    """Bias, swing and swing by band of ``(T, E)`` yaw rates (E envs) after ``settle_steps``.

    ``rms_error`` is over the steady samples of all envs; ``bias`` is the mean error; ``swing`` the RMS of
    each env's yaw rate about its own mean, pooled; ``bands`` split ``swing`` (:func:`swing_bands`, pooled).
    """
    steady = np.asarray(yaw_rate, dtype=float)[settle_steps:]
    if steady.shape[0] < 8:
        raise ValueError(f"{steady.shape[0]} steady samples: too few for a spectrum")
    error = command - steady
    per_env = [swing_bands(steady[:, env], dt_s) for env in range(steady.shape[1])]
    return {
        "command_radps": command,
        "mean_yaw_rate_radps": float(steady.mean()),
        "rms_error_radps": float(np.sqrt((error**2).mean())),
        "bias_radps": float(error.mean()),
        "swing_radps": float(np.sqrt(steady.var(axis=0).mean())),
        "bands_hz": [[lo, None if math.isinf(hi) else hi] for lo, hi in BANDS_HZ],
        "swing_by_band_radps": [float(np.sqrt(np.mean(np.square(col)))) for col in zip(*per_env, strict=True)],
    }


def record_case(
    task: str,
    checkpoint: Path,
    case: Any,
    num_envs: int,
    steps: int,
    sample: Any,
    overrides: Sequence[str] = (),
) -> np.ndarray:
    """``(T, E, ...)`` of ``sample(robot_data)`` each control step, ``num_envs`` envs at a fixed command ``case``.

    Args:
        case: A :class:`~linkage_lab.evaluation.sweep.CommandCase`.
        sample: Maps the robot's articulation data to an ``(E, ...)`` tensor, e.g. the base-frame yaw rate.

    Raises:
        RuntimeError: An env's episode ended (a fall) before ``steps``: its trace would hold a reset.
    """
    import torch

    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    samples: list[torch.Tensor] = []
    ended: list[bool] = []

    def on_step(env: Any) -> None:
        unwrapped = env.unwrapped
        ended.append(bool(unwrapped.reset_buf.any()))
        samples.append(sample(unwrapped.scene["robot"].data).clone())

    evaluate(
        EvalRequest(
            task=task,
            checkpoint=checkpoint,
            episodes=num_envs,
            num_envs=num_envs,
            max_steps=steps,
            out_dir=Path("outputs") / "spectrum" / "eval" / case.name,
            overrides=[*case.overrides(), *overrides],
            progress=False,
            force=True,
            on_step=on_step,
        )
    )
    if any(ended):
        raise RuntimeError(f"{case.name}: an episode ended at step {ended.index(True)} of {steps}")
    return torch.stack(samples).cpu().numpy()


#: Where the yaw rate is read: ``base``, the base frame's z (the gyro's axis, what the acceptance reads), or
#: ``world``, the world's vertical (what a heading follows; the two differ by the base's roll and pitch).
FRAMES = ("base", "world")


def record_turn(
    task: str,
    checkpoint: Path,
    yaw_rate: float,
    num_envs: int,
    steps: int,
    overrides: Sequence[str] = (),
    frame: str = "base",
) -> np.ndarray:
    """``(T, E)`` yaw rates (rad/s, in ``frame``: :data:`FRAMES`) of ``num_envs`` envs turning on the spot for
    ``steps`` control steps."""
    from linkage_lab.evaluation.sweep import CommandCase

    sample = yaw_rate_reader(frame)
    return record_case(task, checkpoint, CommandCase(0.0, yaw_rate), num_envs, steps, sample, overrides)


def yaw_rate_reader(frame: str) -> Any:
    """Maps an articulation's data to its ``(E,)`` yaw rates in ``frame`` (:data:`FRAMES`).

    Raises:
        ValueError: ``frame`` is not one of :data:`FRAMES`.
    """
    if frame not in FRAMES:
        raise ValueError(f"frame must be one of {FRAMES}, got {frame!r}")
    attribute = "root_ang_vel_b" if frame == "base" else "root_ang_vel_w"

    def yaw_rate(data: Any) -> Any:
        return getattr(data, attribute).torch[:, 2]

    return yaw_rate


def plot(rows: list[dict[str, Any]], traces: list[np.ndarray], dt_s: float, path: Path) -> None:
    """Per command: a 2 s trace of env 0's yaw rate, and the swing by band."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    fig = Figure(figsize=(11, 3.2 * len(rows)))
    axes = fig.subplots(len(rows), 2, squeeze=False)
    labels = [band_label(lo, hi) for lo, hi in rows[0]["bands_hz"]]
    for (trace_ax, band_ax), row, trace in zip(axes, rows, traces, strict=True):
        window = trace[-int(round(2.0 / dt_s)) :, 0]
        t = np.arange(window.size) * dt_s
        trace_ax.plot(t, window, lw=1.2, label="yaw rate, env 0")
        trace_ax.axhline(row["command_radps"], color="k", ls="--", lw=1, label="command")
        trace_ax.set(xlabel="time (s), last 2 s", ylabel="rad/s", title=f"turn at {row['command_radps']:+.2f} rad/s")
        trace_ax.legend(loc="upper right", fontsize=8)
        band_ax.bar(labels, row["swing_by_band_radps"], color="tab:orange")
        band_ax.set(
            ylabel="swing RMS (rad/s)",
            title=f"RMS error {row['rms_error_radps']:.3f} = bias {abs(row['bias_radps']):.3f} (+) "
            f"swing {row['swing_radps']:.3f}",
        )
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=110)


def spectrum_parser(description: str, default_out: Path) -> argparse.ArgumentParser:
    """The arguments every spectrum study takes: the policy, the envs, the window, the output and task overrides."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--task", default="LinkageLab-Velocity-Flat-Limit")
    parser.add_argument("--checkpoint", default="pretrained", help="a model_<it>.pt, a run folder or 'pretrained'")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--duration-s", type=finite_float, default=19.0, help="inside one 20 s episode")
    parser.add_argument("--settle-s", type=finite_float, default=2.0, help="start of the steady part (s)")
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("overrides", nargs="*", help="hydra overrides for the task")
    return parser


def run_spectrum(
    parser: argparse.ArgumentParser, args: argparse.Namespace, commands: Sequence[float], record: Any, split: Any
) -> tuple[list[dict[str, Any]], list[np.ndarray], float]:
    """Record each command (``record(task, checkpoint, command, num_envs, steps, overrides)``) and split its steady
    part (``split(command, trace, dt, settle_steps)``); returns the rows, the traces and the control period (s).
    A window with no steady part is a usage error of ``parser``."""
    if not args.settle_s >= 0 or not args.duration_s > args.settle_s:
        parser.error(f"--duration-s ({args.duration_s}) must exceed --settle-s ({args.settle_s}) >= 0")
    from linkage_lab.evaluation.policies import resolve_checkpoint
    from linkage_lab.runtime import resolve_configs

    env_cfg, agent_cfg = resolve_configs(args.task, args.overrides, "cpu")
    dt = float(env_cfg.sim.dt * env_cfg.decimation)
    args.checkpoint = resolve_checkpoint(args.checkpoint, args.task, agent_cfg.experiment_name)
    rows, traces = [], []
    for command in commands:
        trace = record(args.task, args.checkpoint, command, args.num_envs, round(args.duration_s / dt), args.overrides)
        rows.append(split(command, trace, dt, int(round(args.settle_s / dt))))
        traces.append(trace)
    return rows, traces, dt


def write_spectrum(args: argparse.Namespace, rows: list[dict[str, Any]], stem: str) -> Path:
    """``<out>/<stem>.json``: the task, checkpoint, overrides, window start and the rows (written atomically)."""
    from linkage_lab.io import write_json_atomic

    args.out.mkdir(parents=True, exist_ok=True)
    document = {
        "task": args.task,
        "checkpoint": str(args.checkpoint),
        "overrides": list(args.overrides),
        "settle_s": args.settle_s,
        "results": rows,
    }
    path = args.out / f"{stem}.json"
    write_json_atomic(path, document)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = spectrum_parser(__doc__.splitlines()[0], Path("outputs") / "yaw_spectrum")
    parser.add_argument("--yaw-rate", type=finite_float, action="append", help="rad/s (repeatable; default ±0.3)")
    parser.add_argument("--frame", choices=FRAMES, default="base", help="the yaw rate's axis (default: the base's z)")
    args = parser.parse_args(argv)
    record = functools.partial(record_turn, frame=args.frame)
    rows, traces, dt = run_spectrum(parser, args, args.yaw_rate or (0.3, -0.3), record, decompose)
    for row in rows:
        row["frame"] = args.frame
    path = write_spectrum(args, rows, "yaw_spectrum")
    plot(rows, traces, dt, args.out / "yaw_spectrum.png")
    for row in rows:
        bands = " / ".join(f"{value:.3f}" for value in row["swing_by_band_radps"])
        print(
            f"{row['command_radps']:+.2f} rad/s: mean {row['mean_yaw_rate_radps']:+.3f}, RMS error "
            f"{row['rms_error_radps']:.3f} (bias {row['bias_radps']:+.3f}, swing {row['swing_radps']:.3f}; by band "
            f"0-3 / 3-6 / 6-12 / >12 Hz: {bands})"
        )
    print(f"wrote {path} and {args.out / 'yaw_spectrum.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

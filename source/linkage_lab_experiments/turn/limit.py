"""Can the Limit turn? Yaw rate of a differential trot in the velocity task (Isaac Lab, one env).

The Limit's legs are planar (hip, knee, ankle about parallel +y axes): a foot moves only in the
body's sagittal plane, so a yaw rotation about the base moves every stance foot sideways, which only
slip allows. This trots the left and right legs at different stride speeds (the scripted trot of
:mod:`linkage_lab.gait.trot`, left legs at ``v_left``, right legs at ``v_right``), pushes off, for 6 s,
and reports the mean body yaw rate and forward speed over the last 4 s. A rigid no-slip turn would
give ``ω = (v_right − v_left) / w`` for a track width ``w`` of about 0.2 m.

It also reports how the yaw rate swings about its mean over those 4 s, in the frequency bands of
:mod:`linkage_lab_experiments.turn.yaw_spectrum`: the scripted joint targets are smooth sinusoids at the
trot's frequency, so what swings faster than the stepping is the skid of the stance feet, not a policy's
chatter.

Run ``python -m linkage_lab_experiments.turn.limit [--pairs VL,VR ...] [--out FILE] [OVERRIDE ...]`` (overrides
of the task, e.g. ``env.events.physics_material.params.static_friction_range=[0.4,0.4]``); ``--out`` writes the
rows and the overrides as JSON, and their swing by band as a PNG beside it.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from linkage_lab.io import strict_json, write_json_atomic
from linkage_lab_experiments.turn.yaw_spectrum import BANDS_HZ, band_label, swing_bands

TASK = "LinkageLab-Velocity-Flat-Limit"
#: ``(v_left, v_right)`` stride speeds (m/s): a spin on the spot, and two curved walks.
DEFAULT_PAIRS = ((-0.3, 0.3), (-0.15, 0.15), (0.1, 0.3))


def differential_trot(
    pairs: Sequence[tuple[float, float]], duration_s: float = 6.0, extra_overrides: Sequence[str] = ()
) -> list[dict]:
    """One 1-env rollout per ``(v_left, v_right)``; mean yaw rate (rad/s) and forward speed over the last 4 s, and
    the yaw rate's swing about its mean (RMS, rad/s) with its split by band."""
    import torch

    from linkage_lab.gait.policy import ScriptedPolicy
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.runtime import make_env

    overrides = (
        "env.events.push_robot=null",
        "env.commands.base_velocity.ranges.lin_vel_x=[0.0,0.0]",
        "env.commands.base_velocity.ranges.ang_vel_z=[0.0,0.0]",
        *extra_overrides,
    )
    rows = []
    for v_left, v_right in pairs:
        with make_env(TASK, num_envs=1, device="cpu", overrides=overrides) as (env, _):
            env.reset()
            unwrapped = env.unwrapped
            joint_names = list(unwrapped.action_manager.get_term("joint_pos")._joint_names)
            policy = ScriptedPolicy(env, get_robot("limit").require("scripted_gait")(joint_names), start_delay_s=0.3)
            gait = policy.gait
            right = torch.tensor([name.split("_")[0].endswith("r") for name in gait.joint_names])
            robot = unwrapped.scene["robot"]
            yaw_rates, speeds = [], []
            steps = int(round(duration_s / unwrapped.step_dt))
            for step in range(steps):
                time_s = step * unwrapped.step_dt
                targets = torch.where(
                    right, gait.joint_targets(time_s, v_right, 0.3), gait.joint_targets(time_s, v_left, 0.3)
                )
                by_name = dict(zip(gait.joint_names, targets.unbind(-1), strict=True))
                joint = torch.stack([by_name[name] for name in policy.joint_names], dim=-1).float()
                env.step(policy.actions_for(joint))
                if time_s >= duration_s - 4.0:
                    yaw_rates.append(float(robot.data.root_ang_vel_b.torch[0, 2]))
                    speeds.append(float(robot.data.root_lin_vel_b.torch[0, 0]))
            rows.append(
                {
                    "v_left_mps": v_left,
                    "v_right_mps": v_right,
                    "yaw_rate_radps": statistics.mean(yaw_rates),
                    "forward_speed_mps": statistics.mean(speeds),
                    "no_slip_yaw_rate_radps": (v_right - v_left) / 0.2,
                    "yaw_swing_radps": float(np.std(yaw_rates)),
                    "yaw_swing_bands_radps": dict(
                        zip(_band_names(BANDS_HZ), swing_bands(np.array(yaw_rates), unwrapped.step_dt), strict=True)
                    ),
                }
            )
    return rows


def _pair(text: str) -> tuple[float, float]:
    """``"VL,VR"`` as two finite stride speeds (m/s)."""
    parts = text.split(",")
    try:
        pair = tuple(float(v) for v in parts)
    except ValueError:
        pair = ()
    if len(pair) != 2 or not all(math.isfinite(v) for v in pair):
        raise ValueError(f"--pairs takes VL,VR (two finite speeds in m/s), got {text!r}")
    return pair


def _band_names(bands: Sequence[tuple[float, float]]) -> list[str]:
    return [band_label(lo, hi) for lo, hi in bands]


def plot_rows(rows: Sequence[dict], path: Path) -> Path:
    """Per ``(v_left, v_right)`` pair, the yaw rate's swing by band (grouped bars), its mean turn in the legend."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic

    bands = _band_names(BANDS_HZ)
    fig = Figure(figsize=(8, 3.6))
    ax = fig.subplots()
    width = 0.8 / max(len(rows), 1)
    for i, row in enumerate(rows):
        x = np.arange(len(bands)) + (i - (len(rows) - 1) / 2) * width
        label = (
            f"left {row['v_left_mps']:+.2f} / right {row['v_right_mps']:+.2f} m/s: "
            f"turns {row['yaw_rate_radps']:+.3f} rad/s, swing {row['yaw_swing_radps']:.3f}"
        )
        ax.bar(x, [row["yaw_swing_bands_radps"][name] for name in bands], width, label=label)
    ax.set_xticks(np.arange(len(bands)), bands)
    ax.set(ylabel="yaw-rate swing RMS (rad/s)", title="scripted differential trot: the yaw rate's swing by band")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return save_figure_atomic(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=None, metavar="VL,VR", help="left,right stride speeds (m/s)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds per rollout; the last 4 s are measured")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="also write the rows and overrides to this JSON file (and a PNG beside it)",
    )
    parser.add_argument("overrides", nargs="*", help="task overrides (key=value)")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.duration) and args.duration > 4.0):
        parser.error(
            f"--duration must be a finite number of seconds above 4 (the measured window), got {args.duration}"
        )
    pairs = DEFAULT_PAIRS
    if args.pairs:
        try:
            pairs = tuple(_pair(text) for text in args.pairs)
        except ValueError as exc:
            parser.error(str(exc))
    rows = differential_trot(pairs, args.duration, args.overrides)
    if args.out is not None:
        document = {"task": TASK, "duration_s": args.duration, "overrides": list(args.overrides), "results": rows}
        print(f"wrote {write_json_atomic(args.out, document)} and {plot_rows(rows, args.out.with_suffix('.png'))}")
    if args.json:
        print(strict_json({"results": rows}))
        return 0
    bands = _band_names(BANDS_HZ)
    print(
        f"{'v_left':>7s} {'v_right':>8s} {'yaw rate':>9s} {'no-slip':>8s} {'forward':>8s} {'swing':>6s} "
        + " ".join(f"{name:>9s}" for name in bands)
    )
    for row in rows:
        print(
            f"{row['v_left_mps']:7.2f} {row['v_right_mps']:8.2f} {row['yaw_rate_radps']:9.3f} "
            f"{row['no_slip_yaw_rate_radps']:8.2f} {row['forward_speed_mps']:8.3f} {row['yaw_swing_radps']:6.3f} "
            + " ".join(f"{row['yaw_swing_bands_radps'][name]:9.3f}" for name in bands)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

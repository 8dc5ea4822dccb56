"""Does Marvin's gait prior turn on command? Mean yaw rate of the prior alone (zero residual) per turn gain.

The residual task's gait can swing both hip yaws by ``k_ω ω_z`` each step
(``env.actions.joint_pos.turn_per_yaw_rate_s``). This walks the prior alone in the task (diamond ankles,
nominal mass, no pushes, two envs per command) at a forward command and the yaw-rate commands given,
and reports the mean yaw rate over the last 6 of 12 s, so ``k_ω`` can be set where the robot turns at
the rate asked (``gain`` = mean yaw rate / command).

Run ``python -m linkage_lab_experiments.turn.marvin [--gain 0.5] [--forward 0.4] [--yaw-rates=-0.2,0,0.2]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from linkage_lab.arguments import finite_float
from linkage_lab.io import strict_json

TASK = "LinkageLab-Velocity-Flat-Marvin-Residual"
#: Envs per yaw-rate command.
ENVS_PER_COMMAND = 2


def turn_rates(gain_s: float, forward_mps: float, yaw_rates: Sequence[float], duration_s: float = 12.0) -> list[dict]:
    """Per env: the commanded yaw rate, the mean yaw rate and forward speed over the last 6 s, and whether it fell."""
    import torch

    from linkage_lab.runtime import make_env

    overrides = (
        "presets=diamond",
        "env.events.push_robot=null",
        "env.events.add_base_mass=null",
        f"env.actions.joint_pos.turn_per_yaw_rate_s={gain_s}",
    )
    commands = [(forward_mps, w) for w in yaw_rates for _ in range(ENVS_PER_COMMAND)]
    with make_env(TASK, num_envs=len(commands), device="cpu", overrides=overrides) as (env, _):
        unwrapped = env.unwrapped
        unwrapped.event_manager.cfg.reset_base.params["velocity_range"] = {}
        env.reset()
        command_term = unwrapped.command_manager.get_term("base_velocity")
        command = torch.tensor([[v, 0.0, w] for v, w in commands])
        robot = unwrapped.scene["robot"]
        zeros = torch.zeros(len(commands), unwrapped.action_manager.total_action_dim)
        fell = torch.zeros(len(commands), dtype=torch.bool)
        yaw_rate_sum = torch.zeros(len(commands))
        speed_sum = torch.zeros(len(commands))
        steps = int(round(duration_s / unwrapped.step_dt))
        counted = 0
        for step in range(steps):
            # Written before every step, so the task's resampling never reaches the gait.
            command_term.vel_command_b[:] = command
            _, _, terminated, _, _ = env.step(zeros)
            fell |= terminated
            if step * unwrapped.step_dt >= duration_s - 6.0:
                yaw_rate_sum += robot.data.root_ang_vel_w.torch[:, 2]
                speed_sum += robot.data.root_lin_vel_b.torch[:, 0]
                counted += 1
    rows = []
    for index, (forward, yaw_rate) in enumerate(commands):
        mean_yaw_rate = float(yaw_rate_sum[index]) / counted
        rows.append(
            {
                "turn_per_yaw_rate_s": gain_s,
                "forward_command_mps": forward,
                "yaw_rate_command_radps": yaw_rate,
                "mean_yaw_rate_radps": mean_yaw_rate,
                "gain": mean_yaw_rate / yaw_rate if yaw_rate else None,
                "mean_forward_speed_mps": float(speed_sum[index]) / counted,
                "fell": bool(fell[index]),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gain", type=finite_float, default=0.5, help="k_ω, hip-yaw turn per yaw-rate command (s)")
    parser.add_argument("--forward", type=finite_float, default=0.4, help="forward command (m/s)")
    parser.add_argument("--yaw-rates", default="-0.2,0,0.2", help="comma-separated yaw-rate commands (rad/s)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    try:
        yaw_rates = [float(w) for w in args.yaw_rates.split(",")]
    except ValueError:
        parser.error(f"--yaw-rates: expected comma-separated numbers, got {args.yaw_rates!r}")
    rows = turn_rates(args.gain, args.forward, yaw_rates)
    if args.json:
        print(strict_json(rows))
        return 0
    for row in rows:
        gain = "-" if row["gain"] is None else f"{row['gain']:.2f}x"
        print(
            f"k_w {row['turn_per_yaw_rate_s']:.2f} s  v {row['forward_command_mps']:.2f} m/s  "
            f"w_cmd {row['yaw_rate_command_radps']:+.2f} -> {row['mean_yaw_rate_radps']:+.3f} rad/s ({gain})  "
            f"speed {row['mean_forward_speed_mps']:.3f} m/s{'  FELL' if row['fell'] else ''}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

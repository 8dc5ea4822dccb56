"""``linkage-lab s3n``: S3N inertia tables and the fidelity benchmark against the closed-chain oracle."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys

from linkage_lab.arguments import finite_float
from linkage_lab.io import strict_json

#: The preset of ``s3n table`` that is not a robot: the paper's leg (docs/design/s3n.md §4).
PAPER = "paper"


def table_presets() -> list[str]:
    """``s3n table`` presets: the paper's leg and every robot with an S3N config (placeholder motor values)."""
    from linkage_lab.robots.registry import robots_with

    return [PAPER, *robots_with("s3n_cfg")]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``s3n table`` and ``s3n validate``."""
    parser = subparsers.add_parser(
        "s3n",
        help="S3N dynamics normalisation: inertia tables, fidelity vs a closed-chain oracle",
        description="S3N (docs/design/s3n.md): what the serial simulator integrates under Kin-Only, S3N-Act and "
        "S3N-Full, and how close each comes to a closed-chain MuJoCo model of the real leg.",
    )
    commands = parser.add_subparsers(dest="s3n_command", metavar="SUBCOMMAND", required=True)

    table = commands.add_parser(
        "table",
        help="total joint-space inertia per model at one knee angle",
        description="Print the 2x2 serial joint-space inertia (kg·m²) the simulator integrates under "
        "each model: kin_only = M_link^s + diag(J̄), s3n_act = + ΔM_act, s3n_full = + ΔM_link = Jᵀ M_p J. "
        "M_link^s(α) uses the two-link form [[a + 2b cos α, c + b cos α], [c + b cos α, c]]; for the "
        "paper preset a and c come from its 90° value and b = M₁₂ of its identified M_p; for a robot "
        "(e.g. limit) a, b, c come from its leg body, the one its task's actuator uses.",
    )
    table.add_argument(
        "--preset", default=PAPER, help="parameter set: paper or a robot with an S3N config (default: paper)"
    )
    table.add_argument("--alpha-deg", type=finite_float, default=90.0, help="relative knee angle α in degrees")
    table.add_argument("--json", action="store_true", help="print one JSON object")
    table.set_defaults(func=_table)

    validate = commands.add_parser(
        "validate",
        help="chirp fidelity of the three models against the closed-chain oracle",
        description="Identify the oracle's M_p from a multisine run, drive the oracle and the serial "
        "leg (kin_only, s3n_act, s3n_full) with the paper's chirp (0.2 rad, 0.1-25 Hz, Kp=50, Kd=1.5), "
        "and report joint position and torque RMSE per joint against the oracle.",
    )
    validate.add_argument(
        "--robot", default=None, help="robot whose leg is benchmarked (default: the only one with a leg body)"
    )
    validate.add_argument("--json", action="store_true", help="print one JSON object")
    validate.add_argument("--plot", metavar="DIR", help="write s3n_errors.png and s3n_inertia.png here")
    validate.add_argument("--duration", type=finite_float, default=None, help="chirp length in s (default 10)")
    validate.add_argument(
        "--dt", type=finite_float, default=None, help="physics/PD step of all models in s (default 0.001)"
    )
    validate.add_argument(
        "--acceleration-estimate",
        choices=("previous", "torque_predicted"),
        default="previous",
        help="q̈ fed to the explicit S3N torque: the previous step's (the paper's, default) or that plus "
        "the acceleration change of this step's actuator torque",
    )
    validate.add_argument(
        "--reflected-inertia",
        type=finite_float,
        default=None,
        metavar="KGM2",
        help="both motors' reflected rotor inertia N²J_m in kg·m² (default: the robot config's; the S3N paper's "
        "motors: 0.0162)",
    )
    validate.add_argument(
        "--isaac",
        action="store_true",
        help="instead, the same chirp (0.1-10 Hz, 4 s unless --duration) on the robot's task leg in Isaac "
        "Lab (base fixed, targets every 5 ms physics step) under each model, against the standalone serial "
        "leg with the task's own drive (its q̈ estimate too); prints their RMSE, pass/fail (exit 1 on fail)",
    )
    validate.set_defaults(func=_validate)


def inertia_table(preset: str, alpha_deg: float) -> dict:
    """``{"alpha_deg": A, "kin_only": M, "s3n_act": M, "s3n_full": M}`` with 2x2 lists (kg·m²).

    Args:
        preset: ``paper`` or a robot with an ``s3n_cfg`` extra (its serial link inertia from its leg body).
        alpha_deg: Relative knee angle (deg).

    Raises:
        CliError: ``preset`` is neither.
    """
    from dataclasses import replace

    import torch

    from linkage_lab.cli.main import CliError
    from linkage_lab.dynamics.s3n import S3N_MODELS, integrated_inertia, paper_s3n_cfg
    from linkage_lab.kinematics.transmission import PARALLELOGRAM_LEG_JACOBIAN
    from linkage_lab.robots.registry import get_robot

    presets = table_presets()
    if preset not in presets:
        raise CliError(f"unknown --preset {preset!r}; choices: {', '.join(presets)}")
    base = paper_s3n_cfg() if preset == PAPER else get_robot(preset).extra("s3n_cfg")("s3n_full")
    alpha = torch.tensor(math.radians(alpha_deg), dtype=torch.float64)
    jacobian = torch.tensor(PARALLELOGRAM_LEG_JACOBIAN, dtype=torch.float64)
    result: dict = {"alpha_deg": alpha_deg}
    for model in S3N_MODELS:
        result[model] = integrated_inertia(replace(base, model=model), alpha, jacobian).tolist()
    return result


def _table(args: argparse.Namespace) -> int:
    result = inertia_table(args.preset, args.alpha_deg)
    if args.json:
        print(strict_json(result, indent=None))
        return 0
    note = " (placeholder motor values)" if args.preset != PAPER else ""
    print(f"S3N joint-space inertia, preset {args.preset}{note}, α = {args.alpha_deg:g}°  [kg·m²]")
    for model in ("kin_only", "s3n_act", "s3n_full"):
        (m11, m12), (m21, m22) = result[model]
        print(f"  {model:9s} [[{m11:9.6f}, {m12:9.6f}],")
        print(f"  {'':9s}  [{m21:9.6f}, {m22:9.6f}]]")
    return 0


def _validate(args: argparse.Namespace) -> int:
    if args.isaac:
        return _validate_isaac(args)
    from dataclasses import replace

    from tqdm import tqdm

    from linkage_lab.cli.main import CliError
    from linkage_lab.robots.registry import MissingCapability, UnknownRobot
    from linkage_lab_experiments.analysis.fidelity import FidelityCfg, plot_fidelity, run_fidelity

    try:
        cfg = FidelityCfg.for_robot(args.robot, acceleration_estimate=args.acceleration_estimate)
    except (UnknownRobot, MissingCapability, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if args.duration is not None:
        if args.duration <= 0.0:
            raise CliError("--duration must be positive")
        identification_s = min(6.0, max(2.0, args.duration))
        cfg = replace(cfg, duration_s=args.duration, identification_duration_s=identification_s)
    if args.dt is not None:
        if not 0.0 < args.dt <= 0.01:
            raise CliError("--dt must be in (0, 0.01] s")
        cfg = replace(cfg, timestep_s=args.dt)
    if args.reflected_inertia is not None:
        if not args.reflected_inertia > 0.0:
            raise CliError("--reflected-inertia must be positive")
        cfg = replace(cfg, oracle=replace(cfg.oracle, reflected_inertia_kgm2=(args.reflected_inertia,) * 2))
    with tqdm(total=5, desc="s3n validate", unit="run", leave=False) as bar:
        result = run_fidelity(cfg, progress=lambda label: (bar.set_postfix_str(label), bar.update()))
    if args.plot:
        plot_fidelity(result, cfg, args.plot)
    if args.json:
        print(strict_json(result.metrics, indent=None))
        return 0
    _print_report(result, cfg, args.plot)
    return 0


def _validate_isaac(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from linkage_lab.cli.main import CliError
    from linkage_lab_experiments.validation.isaac_leg import IsaacConsistencyCfg, format_report, run_isaac_consistency

    if args.dt is not None or args.plot:
        raise CliError("--isaac runs at the task's own physics step and writes no plots: drop --dt/--plot")
    if args.duration is not None and args.duration <= 0.0:
        raise CliError("--duration must be positive")
    cfg = IsaacConsistencyCfg(robot=args.robot)
    # Isaac Lab prints its configuration tables to stdout: keep stdout for the report alone.
    with (
        contextlib.redirect_stdout(sys.stderr),
        tqdm(total=2 * len(cfg.models) + 1, desc="s3n validate --isaac", unit="run", leave=False) as bar,
    ):
        result = run_isaac_consistency(
            duration_s=args.duration, cfg=cfg, progress=lambda label: (bar.set_postfix_str(label), bar.update())
        )
    print(strict_json(result, indent=None) if args.json else format_report(result))
    return 0 if result["passed"] else 1


def _print_report(result, cfg, plot_dir: str | None) -> None:
    models, reduction = result.metrics["models"], result.metrics["reduction_pct"]
    ident = result.identification
    print(
        f"S3N fidelity vs closed-chain oracle: chirp {cfg.chirp_amplitude_rad} rad, "
        f"{cfg.chirp_band_hz[0]}-{cfg.chirp_band_hz[1]} Hz over {cfg.duration_s:g} s, "
        f"Kp={cfg.motor_kp:g}, Kd={cfg.motor_kd:g}, dt={cfg.timestep_s * 1e3:g} ms, "
        f"S3N q̈ estimate: {cfg.acceleration_estimate}"
    )
    header = ("model", "pos RMSE hip", "knee", "tau RMSE hip", "knee", "Δpos", "Δtau")
    print("{:10s} {:>13s} {:>9s} {:>13s} {:>9s} {:>7s} {:>7s}".format(*header))
    for model, values in models.items():
        (ph, pk), (th, tk) = values["pos_rmse"], values["tau_rmse"]
        red = reduction.get(model)
        red_text = f"{red['pos']:6.1f}% {red['tau']:6.1f}%" if red else f"{'-':>7s} {'-':>7s}"
        print(f"{model:10s} {ph:9.5f} rad {pk:9.5f} {th:9.4f} N·m {tk:9.4f} {red_text}")
    true = result.true_mp_kgm2
    print(
        "identified M_p (M11, M12, M22) = ({:.6f}, {:.6f}, {:.6f}) kg·m²; ".format(*ident.mp_kgm2)
        + "oracle mass matrix ({:.6f}, {:.6f}, {:.6f})".format(*true)
    )
    print(
        f"max loop-closure violation {result.max_constraint_violation_m:.2e} m; "
        f"oracle motor torque limited in {100 * result.traces['oracle'].saturated_fraction:.0f} % of steps"
    )
    if plot_dir:
        print(f"plots: {plot_dir}/s3n_errors.png, {plot_dir}/s3n_inertia.png")

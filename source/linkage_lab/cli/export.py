"""``linkage-lab export``: a checkpoint as a deployable bundle (policy.onnx, metadata, robot-side files)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` command."""
    parser = subparsers.add_parser(
        "export",
        help="export a checkpoint as a bundle: policy.onnx with metadata, robot-side files, README",
        description="Writes DIR/policy.onnx (actor + observation normaliser, metadata_props), metadata.json, "
        "README.md and the robot's deploy files (Marvin: ankle bridge graphs; Limit: deploy config). The "
        "bundle appears whole or not at all; a folder export did not write is never replaced. Trailing "
        "key=value tokens are hydra overrides; pass the training's (e.g. presets=box).",
    )
    parser.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    parser.add_argument(
        "--checkpoint",
        required=True,
        help="a model_<it>.pt, a run folder, or 'latest' (the task's latest run)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="bundle folder: new, empty, or a previous export bundle (--force)"
    )
    parser.add_argument("--force", action="store_true", help="replace a previous export bundle in the --out folder")
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--skip-deploy", action="store_true", help="no robot-side files (ankle bridge, deploy config)")
    parser.set_defaults(func=_export, accepts_overrides=True)


def _export(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.evaluation.policies import read_checkpoint, resolve_checkpoint
    from linkage_lab.evaluation.policy_check import check_checkpoint_sizes, task_sizes
    from linkage_lab.export.bundle import EXPORT_COMMAND, export_bundle
    from linkage_lab.outputs import check_output_dir
    from linkage_lab.runtime import resolve_configs

    # Everything a user can get wrong is checked here, before the simulation is built; the errors
    # (unknown task or override, bad checkpoint, refused output folder) print as one line.
    env_cfg, agent_cfg = resolve_configs(args.task, overrides, args.device)
    checkpoint = resolve_checkpoint(args.checkpoint, args.task, agent_cfg.experiment_name)
    state = read_checkpoint(checkpoint, args.task)
    check_checkpoint_sizes(checkpoint, state, task_sizes(env_cfg, agent_cfg), args.task)
    check_output_dir(args.out, EXPORT_COMMAND, args.force)
    result = export_bundle(
        args.task,
        checkpoint,
        args.out,
        overrides,
        args.device,
        with_deploy=not args.skip_deploy,
        force=args.force,
    )
    print(f"bundle: {result.out_dir}")
    for name in result.files:
        print(f"  {name}")
    print(f"onnxruntime vs torch: max |Δ| = {result.parity_max_abs:.2e}")
    return 0

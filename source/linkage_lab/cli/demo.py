"""``linkage-lab demo``: the main job — build assets, train briefly, evaluate, export."""

from __future__ import annotations

import argparse
import time

import yaml

from linkage_lab.paths import CONFIG_DIR


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="the main job: assets -> short PPO training -> evaluation -> export (configs/experiments/demo.yaml)",
    )
    parser.add_argument(
        "--preset", default="demo", help="experiment preset under configs/experiments (default: demo)"
    )
    parser.set_defaults(func=_demo)


def load_preset(name: str) -> dict:
    """An experiment preset from ``configs/experiments/<name>.yaml``."""
    from linkage_lab.cli.main import CliError

    path = CONFIG_DIR / "experiments" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise CliError(f"unknown experiment preset {name!r}; known: {', '.join(known)}")
    return yaml.safe_load(path.read_text())


def _demo(args: argparse.Namespace) -> int:
    from linkage_lab.description.build import build_robot, buildable_robots
    from linkage_lab.training import train

    preset = load_preset(args.preset)
    start = time.perf_counter()
    print("[1/2] building robot assets")
    for robot in buildable_robots():
        info = build_robot(robot)
        print(f"      {robot}: {'built' if info['rebuilt'] else 'up to date'}")
    print(f"[2/2] training {preset['task']} ({' '.join(preset['overrides'])})")
    result = train(preset["task"], list(preset["overrides"]))
    print()
    print(f"demo finished in {time.perf_counter() - start:.0f} s")
    print(f"  training logs (TensorBoard): {result.log_dir}")
    print(f"  checkpoint:                  {result.checkpoint}")
    return 0

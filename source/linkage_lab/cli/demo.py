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
        help=(
            "the main job: assets -> scripted sprint -> short PPO training -> evaluation -> export "
            "(configs/experiments/demo.yaml)"
        ),
    )
    parser.add_argument("--preset", default="demo", help="experiment preset under configs/experiments (default: demo)")
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
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate
    from linkage_lab.export.bundle import export_bundle
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.sprint.runner import run_race, write_race
    from linkage_lab.training import train

    preset = load_preset(args.preset)
    task, overrides = preset["task"], list(preset["overrides"])
    evaluation = preset.get("eval", {})
    sprint = preset.get("sprint")
    steps = 5 if sprint else 4
    step = iter(range(1, steps + 1))
    start = time.perf_counter()
    print(f"[{next(step)}/{steps}] building robot assets", flush=True)
    for robot in buildable_robots():
        info = build_robot(robot)
        print(f"      {robot}: {'built' if info['rebuilt'] else 'up to date'}")
    race = None
    if sprint:
        ankle = sprint.get("ankle", "box")
        print(f"[{next(step)}/{steps}] Marvin's 10 m sprint, scripted gait, {ankle} ankles", flush=True)
        record = run_race("scripted", ankle)
        # The demo's own race folder: a previous demo's race there is replaced, anything else is refused.
        race = write_race(record, REPO_ROOT / "outputs" / "sprint" / f"scripted_{ankle}", force=True)
        m = record.metrics
        print(f"      {m['ended_reason']} after {m['duration_s']:.2f} s, {m['distance_m']:.2f} m", flush=True)
    print(f"[{next(step)}/{steps}] training {task} ({' '.join(overrides)})", flush=True)
    result = train(task, overrides)
    if result.checkpoint is None:
        raise RuntimeError(f"training wrote no checkpoint in {result.log_dir}")
    print(f"[{next(step)}/{steps}] evaluating {result.checkpoint.name} headless", flush=True)
    # The env-size overrides of training do not apply to evaluation and export.
    task_overrides = [o for o in overrides if not o.startswith(("agent.", "env.scene.num_envs="))]
    eval_dir, report = evaluate(
        EvalRequest(
            task=task,
            checkpoint=result.checkpoint,
            episodes=int(evaluation.get("episodes", 8)),
            num_envs=int(evaluation.get("num_envs", 8)),
            overrides=tuple(task_overrides),
        )
    )
    print(f"[{next(step)}/{steps}] exporting the policy for hardware", flush=True)
    bundle = export_bundle(task, result.checkpoint, result.log_dir / "export", overrides=task_overrides)
    print()
    print(f"demo finished in {time.perf_counter() - start:.0f} s")
    if race:
        print(f"  sprint (scripted gait):      {race['metrics.json']}, {race['path.png']}")
    print(f"  training logs (TensorBoard): {result.log_dir}")
    print(f"  checkpoint:                  {result.checkpoint}")
    print(f"  evaluation:                  {eval_dir / 'eval.json'}")
    print(f"    mean return {report['return']['mean']}, fall rate {report['fall_rate']}")
    print(f"  hardware bundle:             {bundle.out_dir}")
    return 0

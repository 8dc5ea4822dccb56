"""``linkage-lab demo``: the main job — assets, a trained walking Limit, its evaluation, video and export."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import yaml

from linkage_lab.paths import CONFIG_DIR


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help=(
            "the main job: assets -> scripted sprint -> PPO training of a walking Limit -> evaluation at a fixed "
            "command with video -> export -> the shipped Marvin policy (configs/experiments/demo.yaml); "
            "exit status 3 when a policy does not walk as commanded"
        ),
    )
    parser.add_argument(
        "--preset",
        default="demo",
        help="experiment preset: a name under configs/experiments or a YAML file (default: demo)",
    )
    parser.add_argument("--no-video", action="store_true", help="skip the rollout videos")
    parser.set_defaults(func=_demo)


def load_preset(name: str) -> dict:
    """An experiment preset: ``configs/experiments/<name>.yaml``, or a YAML file given by its path."""
    from linkage_lab.cli.main import CliError

    path = Path(name) if name.endswith((".yaml", ".yml")) else CONFIG_DIR / "experiments" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise CliError(f"unknown experiment preset {name!r}; known: {', '.join(known)}")
    return yaml.safe_load(path.read_text())


def walks(report: dict[str, Any], command_mps: float, tolerance_mps: float) -> bool:
    """The demo's pass mark: mean forward speed within ``tolerance_mps`` of the command, and no fall."""
    speed = (report.get("tracking") or {}).get("mean_forward_speed_mps")
    return speed is not None and abs(speed - command_mps) <= tolerance_mps and report.get("falls", 1) == 0


def _demo(args: argparse.Namespace) -> int:
    from linkage_lab.exit_codes import MISSED, verdict_exit
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.robots.assets import build_robot, buildable_robots
    from linkage_lab.training import train

    preset = load_preset(args.preset)
    task, overrides = preset["task"], list(preset["overrides"])
    evaluation = preset.get("eval", {})
    sprint = preset.get("sprint")
    shipped = preset.get("shipped", [])
    out = REPO_ROOT / preset.get("out_dir", "outputs/demo")
    step = _Steps(4 + bool(sprint) + bool(shipped))
    step("building robot assets")
    for robot in buildable_robots():
        info = build_robot(robot)
        print(f"      {robot}: {'built' if info['rebuilt'] else 'up to date'}")
    race = None
    if sprint:
        ankle = sprint.get("ankle", "box")
        step(f"Marvin's 10 m sprint, scripted gait, {ankle} ankles")
        race = _sprint(ankle, REPO_ROOT / "outputs" / "sprint" / f"scripted_{ankle}")
    step(f"training {task} ({' '.join(overrides) or 'the task recipe'})")
    result = train(task, overrides)
    if result.checkpoint is None:
        raise RuntimeError(f"training wrote no checkpoint in {result.log_dir}")
    command = float(evaluation.get("command_mps", 0.3))
    step(f"evaluating {result.checkpoint.name} at {command} m/s forward")
    # The env-size and agent overrides of training do not apply to evaluation and export.
    task_overrides = [o for o in overrides if not o.startswith(("agent.", "env.scene.num_envs="))]
    trained = _evaluate(task, result.checkpoint, command, evaluation, task_overrides, out / "trained", args)
    step("exporting the policy for hardware")
    from linkage_lab.export.bundle import export_bundle

    bundle = export_bundle(task, result.checkpoint, result.log_dir / "export", overrides=task_overrides, force=True)
    shipped_reports = []
    if shipped:
        step("the shipped policies")
        for entry in shipped:
            shipped_reports.append(_shipped(entry, evaluation, out, args))
    step.finish()
    print()
    print(f"demo finished in {step.total_s():.0f} s ({step.summary()})")
    if race:
        print(f"  sprint (scripted gait):      {race['metrics.json']}, {race['path.png']}")
    print(f"  training logs (TensorBoard): {result.log_dir}")
    print(f"  training curves:             {result.log_dir / 'curves'}")
    print(f"  checkpoint:                  {result.checkpoint}")
    print(f"  hardware bundle:             {bundle.out_dir}")
    walked = [_print_eval(f"{task} (trained here)", trained, command, float(evaluation.get("tolerance_mps", 0.05)))]
    for (name, report, folder, target), entry in zip(shipped_reports, shipped):
        tolerance = float(entry.get("tolerance_mps", evaluation.get("tolerance_mps", 0.05)))
        walked.append(_print_eval(f"{name} (shipped)", (report, folder), target, tolerance))
    if not all(walked):
        print(f"verdict: missed (a policy does not walk as commanded); exit status {MISSED}")
    return verdict_exit(all(walked))


class _Steps:
    """The demo's numbered steps: ``step(title)`` prints ``[k/n] title`` and times each step until the next."""

    def __init__(self, count: int):
        self.count = count
        self._titles: list[str] = []
        self._starts: list[float] = []
        self._end: float | None = None

    def __call__(self, title: str) -> None:
        self._titles.append(title)
        self._starts.append(time.perf_counter())
        print(f"[{len(self._titles)}/{self.count}] {title}", flush=True)

    def finish(self) -> None:
        """End the last step."""
        self._end = time.perf_counter()

    def durations_s(self) -> list[float]:
        """Each step's wall time (s), the last one until :meth:`finish` (or now)."""
        end = self._end if self._end is not None else time.perf_counter()
        return [b - a for a, b in zip(self._starts, [*self._starts[1:], end])]

    def total_s(self) -> float:
        return sum(self.durations_s())

    def summary(self) -> str:
        """``step k: N s`` for every step, in order."""
        return ", ".join(f"step {k}: {d:.0f} s" for k, d in enumerate(self.durations_s(), start=1))


def _sprint(ankle: str, folder: Path) -> dict[str, Path]:
    from linkage_lab.sprint.runner import run_race, write_race

    record = run_race("scripted", ankle)
    files = write_race(record, folder, force=True)
    m = record.metrics
    print(f"      {m['ended_reason']} after {m['duration_s']:.2f} s, {m['distance_m']:.2f} m", flush=True)
    return files


def _evaluate(
    task: str,
    checkpoint: Path,
    command_mps: float,
    evaluation: dict[str, Any],
    overrides: list[str],
    folder: Path,
    args: argparse.Namespace,
) -> tuple[dict[str, Any], Path]:
    """One evaluation at a fixed forward command, with env 0's video unless ``--no-video``."""
    from linkage_lab.cli.video_option import video_recorder
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate
    from linkage_lab.evaluation.sweep import CommandCase

    video = None if args.no_video else folder.with_suffix(".mp4")
    recorder = video_recorder(video)
    eval_dir, report = evaluate(
        EvalRequest(
            task=task,
            checkpoint=checkpoint,
            episodes=int(evaluation.get("episodes", 8)),
            num_envs=int(evaluation.get("num_envs", 8)),
            max_steps=evaluation.get("max_steps"),
            overrides=(*overrides, *CommandCase(command_mps).overrides()),
            out_dir=folder,
            force=True,
            on_step=recorder,
        )
    )
    if recorder is not None:
        from linkage_lab.evaluation.video import save_rollout_video

        # 320×240 renders in about 0.09 s a frame on a CPU (`linkage-lab bench video`), 640×480 in 0.13 s.
        print("      " + save_rollout_video(recorder, video, width=320, height=240), flush=True)
    return report, eval_dir


def _shipped(
    entry: dict[str, Any], evaluation: dict[str, Any], out: Path, args: argparse.Namespace
) -> tuple[str, dict[str, Any], Path, float]:
    from linkage_lab.pretrained import pretrained_checkpoint

    task = entry["task"]
    command = float(entry.get("command_mps", 0.4))
    print(f"      {task} at {command} m/s forward", flush=True)
    report, folder = _evaluate(
        task,
        pretrained_checkpoint(task),
        command,
        {**evaluation, **entry},
        list(entry.get("overrides", [])),
        out / task,
        args,
    )
    return task, report, folder, command


def _print_eval(name: str, result: tuple[dict[str, Any], Path], command_mps: float, tolerance_mps: float) -> bool:
    """Print one policy's evaluation and whether it walks as commanded (:func:`walks`); returns that verdict."""
    report, folder = result
    tracking = report.get("tracking") or {}

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    walked = walks(report, command_mps, tolerance_mps)
    verdict = "walks" if walked else "does NOT walk as commanded"
    print(f"  {name}: {verdict}")
    print(
        f"    command {command_mps:.2f} m/s: forward speed {num(tracking.get('mean_forward_speed_mps'))} m/s, "
        f"lin-vel RMS {num(tracking.get('lin_vel_xy_rms_mps'))} m/s, falls {report.get('falls')} "
        f"in {report.get('episodes')} episodes"
    )
    print(f"    {folder / 'eval.json'}" + ("" if not folder.with_suffix(".mp4").exists() else f", {folder}.mp4"))
    return walked

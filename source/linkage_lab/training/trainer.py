"""PPO training of a project task with rsl-rl: new runs, resumed runs, and a Ctrl-C that keeps the work.

The run is built here rather than through Isaac Lab's ``isaaclab train`` backend, which it follows
(env, ``RslRlVecEnvWrapper``, runner, ``run.json`` manifest, ``params/env.yaml`` and ``agent.yaml``),
so that the run folder is the one this call created, a Ctrl-C saves the last finished iteration, and
a run can be continued (:mod:`linkage_lab.training.resume`). ``isaaclab train --rl_library rsl_rl``
still trains the same registered tasks, without these.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from linkage_lab.checkpoints import TRAINING_KEYS, CheckpointError, load_checkpoint, restore_runner
from linkage_lab.paths import LOG_DIR
from linkage_lab.runs import (
    create_run_dir,
    discard_run,
    latest_checkpoint,
    read_record,
    run_lock,
    write_record,
)
from linkage_lab.training.errors import TrainingConfigError
from linkage_lab.training.events import cut_events
from linkage_lab.training.loop import LearnOutcome, run_learning, stop_signum
from linkage_lab.training.resume import ResumePoint, resolve_resume
from linkage_lab.training.vec_env import check_workers, training_vec_env

#: rsl-rl config keys Isaac Lab's own resume reads; this training path does not, so they are refused.
IGNORED_AGENT_KEYS = ("agent.resume", "agent.load_run", "agent.load_checkpoint")


@dataclass(frozen=True)
class TrainResult:
    """Where a training run left its results.

    Attributes:
        log_dir: The run folder (TensorBoard events, checkpoints, ``params/``, ``training.json``);
            ``None`` when a run stopped before its first checkpoint (its folder is removed).
        checkpoint: The newest checkpoint of the run, ``None`` when there is none.
        wall_time_s: Wall time of the call, s.
        first_iteration: The iteration this session started at (0 for a new run).
        last_iteration: The last iteration it finished; ``None`` when none.
        interrupted: Stopped by Ctrl-C.
        resumed_from: The checkpoint the session continued from, ``None`` for a new run.
    """

    log_dir: Path | None
    checkpoint: Path | None
    wall_time_s: float
    first_iteration: int = 0
    last_iteration: int | None = None
    interrupted: bool = False
    resumed_from: Path | None = None


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the training; :attr:`result` says what was saved and where.

    Attributes:
        result: What the run holds now.
        signum: The signal that stopped it (``signal.SIGINT`` or ``signal.SIGTERM``).
    """

    def __init__(self, result: TrainResult, signum: int = signal.SIGINT):
        super().__init__("training interrupted")
        self.result = result
        self.signum = int(signum)


def reject_ignored_keys(overrides: list[str]) -> None:
    """Refuse the rsl-rl resume keys, which would be accepted and silently do nothing.

    Raises:
        TrainingConfigError: Naming the key and ``--resume``.
    """
    for token in overrides:
        key = token.lstrip("+~").partition("=")[0]
        if key in IGNORED_AGENT_KEYS:
            raise TrainingConfigError(
                f"{token!r} is not read by linkage-lab train; continue a run with --resume RUN|latest "
                "[--checkpoint model_<it>.pt]"
            )


def merge_overrides(base: list[str], extra: list[str]) -> list[str]:
    """``base`` overrides with ``extra`` on top: a key set in both keeps ``extra``'s value."""
    merged = {token.partition("=")[0]: token for token in base}
    merged.update({token.partition("=")[0]: token for token in extra})
    return list(merged.values())


def validate_sizes(num_envs: int, agent_cfg: Any, iterations: int) -> None:
    """Check the sizes a PPO run divides by or loops over, before anything is built.

    Raises:
        TrainingConfigError: Naming the first size out of range.
    """
    algorithm = getattr(agent_cfg, "algorithm", None)
    checks = [
        ("number of envs (--num-envs, env.scene.num_envs)", num_envs),
        ("iterations (--max-iterations, agent.max_iterations)", iterations),
        ("agent.num_steps_per_env", agent_cfg.num_steps_per_env),
        ("agent.save_interval", agent_cfg.save_interval),
        ("agent.algorithm.num_learning_epochs", getattr(algorithm, "num_learning_epochs", 1)),
        ("agent.algorithm.num_mini_batches", getattr(algorithm, "num_mini_batches", 1)),
    ]
    for name, value in checks:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise TrainingConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
    batch = num_envs * agent_cfg.num_steps_per_env
    if batch < algorithm.num_mini_batches:
        raise TrainingConfigError(
            f"a rollout of {num_envs} envs x {agent_cfg.num_steps_per_env} steps = {batch} samples cannot be split "
            f"into agent.algorithm.num_mini_batches={algorithm.num_mini_batches} mini-batches"
        )


def train(
    task: str,
    overrides: list[str],
    device: str | None = None,
    num_envs: int | None = None,
    max_iterations: int | None = None,
    seed: int | None = None,
    log_root: Path = LOG_DIR,
    resume: str | None = None,
    checkpoint: str | None = None,
    workers: int | None = None,
) -> TrainResult:
    """Train ``task`` with rsl-rl PPO, env and agent on the same (automatically picked) device.

    A new run goes to ``<log_root>/rsl_rl/<experiment>/<time>[_<run_name>]/``. With ``resume``, the
    run continues from a checkpoint (:func:`~linkage_lab.training.resume.resolve_resume`): networks,
    observation normalisers, optimiser and iteration count. Continuing a run re-applies its recorded
    overrides (the command's own win), keeps its ``--num-envs``/``--seed`` unless given, and by
    default finishes its planned iterations; ``max_iterations`` (or ``agent.max_iterations=``) then
    means that many more. A new run from a checkpoint trains ``max_iterations`` more.

    ``workers`` > 1 splits the envs over that many simulation processes (CPU only, one per core;
    :mod:`~linkage_lab.training.parallel`); ``None`` picks
    :func:`~linkage_lab.training.vec_env.default_workers` (one per core on a CPU, at least 32 envs
    each); a continued run keeps its count unless given.

    Raises:
        TrainingInterrupted: Ctrl-C or SIGTERM; the last finished iteration is saved (see its ``result``).
        TrainingConfigError, ResumeError, CheckpointError, RunBusyError, UnknownTaskError,
            OverrideError: Bad requests, all before the simulation is built.
    """
    from linkage_lab.runtime import configure_cpu_threads, pick_device, resolve_configs

    start = time.perf_counter()
    overrides = list(overrides)
    reject_ignored_keys(overrides)
    if checkpoint is not None and resume is None:
        raise TrainingConfigError("--checkpoint selects the checkpoint to resume from: give --resume RUN|latest too")
    device = pick_device(device)
    configure_cpu_threads(device)
    env_cfg, agent_cfg = resolve_configs(task, overrides, device)
    point: ResumePoint | None = None
    state: dict[str, Any] | None = None
    record: dict[str, Any] = {}
    run_overrides = overrides
    if resume is not None:
        point = resolve_resume(resume, task, agent_cfg.experiment_name, Path(log_root), checkpoint)
        state = load_checkpoint(point.checkpoint, require=TRAINING_KEYS)
        _check_run_task(point.checkpoint, task)
        if point.run_dir is not None:
            record = read_record(point.run_dir)
            run_overrides = merge_overrides(list(record.get("overrides", [])), overrides)
            num_envs = num_envs if num_envs is not None else record.get("num_envs")
            seed = seed if seed is not None else record.get("seed")
            workers = workers if workers is not None else record.get("workers")
            if run_overrides != overrides:
                env_cfg, agent_cfg = resolve_configs(task, run_overrides, device)
        _check_actor_sizes(point.checkpoint, state, env_cfg, agent_cfg, task)
    first = int(state["iter"]) + 1 if state is not None else 0
    iterations = _session_iterations(point, record, agent_cfg, overrides, max_iterations, first)
    env_count = int(num_envs) if num_envs is not None else env_cfg.scene.num_envs
    validate_sizes(env_count, agent_cfg, iterations)
    worker_count = check_workers(workers, env_count, device)
    seed_value = int(seed) if seed is not None else int(agent_cfg.seed)

    session: dict[str, Any] = {"started_at": _now(), "first_iteration": first, "overrides": overrides}
    made: dict[str, Any] = {}
    outcome: LearnOutcome | None = None
    try:
        with contextlib.ExitStack() as held:
            if point is not None:
                if point.run_dir is not None:
                    held.enter_context(run_lock(point.run_dir))
                    made["run_dir"] = point.run_dir
                    # Events a killed session logged after its newest checkpoint would be drawn twice.
                    dropped = cut_events(point.run_dir, first - 1)
                    if dropped:
                        print(
                            f"[linkage-lab] removed {dropped} TensorBoard events past iteration {first - 1} "
                            f"({point.checkpoint.name}): the curves continue from the checkpoint",
                            flush=True,
                        )
                print(f"[linkage-lab] {point.note}", flush=True)

            def prepare(cfg: Any) -> None:
                """Seed the env and give it its run folder (a new one is created now: named by the start time)."""
                cfg.seed = seed_value
                if "run_dir" not in made:
                    made["run_dir"] = create_run_dir(
                        agent_cfg.experiment_name, Path(log_root), agent_cfg.run_name or None
                    )
                    made["new"] = True
                    held.enter_context(run_lock(made["run_dir"]))
                cfg.log_dir = str(made["run_dir"])

            training_env = training_vec_env(
                task, env_count, worker_count, device, run_overrides, (env_cfg, agent_cfg), seed_value, prepare
            )
            with training_env as (env, run_agent_cfg):
                run_dir = made["run_dir"]
                run_agent_cfg.seed = seed_value
                run_agent_cfg.max_iterations = iterations
                runner = _build_runner(env, run_agent_cfg, run_dir)
                if worker_count > 1:
                    from linkage_lab.training.parallel import update_with_threads

                    update_with_threads(runner, worker_count)
                if state is not None:
                    try:
                        restore_runner(runner, state)
                    except CheckpointError as exc:
                        raise CheckpointError(f"{point.checkpoint}: {exc}") from exc
                    runner.current_learning_iteration = first
                record = _start_record(record, task, run_agent_cfg, run_overrides, env, seed_value, device)
                record["workers"] = worker_count
                record["planned_iterations"] = first + iterations
                if point is not None and point.run_dir is None:
                    record["resumed_from"] = str(point.checkpoint.resolve())
                    session["resumed_from"] = record["resumed_from"]
                record.setdefault("sessions", []).append(session)
                _write_run_files(run_dir, task, env.cfg, run_agent_cfg, record, new=made.get("new", False))
                outcome = run_learning(runner, run_dir, iterations, run_agent_cfg.init_at_random_ep_len)
    except BaseException as exc:
        stopped = isinstance(exc, KeyboardInterrupt)
        run_dir = _end_run(made, record, session, "interrupted" if stopped else "failed")
        if stopped:
            raise TrainingInterrupted(_result(run_dir, start, first, None, True, point), stop_signum(exc)) from None
        raise
    status = "interrupted" if outcome.interrupted else "finished"
    run_dir = _end_run(made, record, session, status, outcome.last_iteration)
    if run_dir is not None:
        _write_curves(run_dir)
    result = _result(run_dir, start, first, outcome.last_iteration, outcome.interrupted, point)
    if outcome.interrupted:
        raise TrainingInterrupted(result, outcome.signum or signal.SIGINT)
    return result


def _write_curves(run_dir: Path) -> None:
    """The run's training curves as PNGs in ``<run>/curves/``; a plotting failure never fails a training."""
    from linkage_lab.evaluation.curves import NoEventsError, write_training_curves

    try:
        write_training_curves(run_dir)
    except (NoEventsError, OSError, ValueError) as exc:
        print(f"training curves not written: {exc}")


def _session_iterations(
    point: ResumePoint | None,
    record: dict[str, Any],
    agent_cfg: Any,
    overrides: list[str],
    max_iterations: int | None,
    first: int,
) -> int:
    """Iterations this session runs (see :func:`train`)."""
    explicit = max_iterations
    if explicit is None and any(token.startswith("agent.max_iterations=") for token in overrides):
        explicit = agent_cfg.max_iterations
    if point is None or point.run_dir is None or explicit is not None:
        return explicit if explicit is not None else agent_cfg.max_iterations
    planned = int(record.get("planned_iterations", agent_cfg.max_iterations))
    if planned - first < 1:
        raise TrainingConfigError(
            f"run {point.run_dir.name} already finished its {planned} planned iterations "
            f"({point.checkpoint.name}); pass --max-iterations N to train N more"
        )
    return planned - first


def _check_actor_sizes(checkpoint: Path, state: dict[str, Any], env_cfg: Any, agent_cfg: Any, task: str) -> None:
    """Refuse, before the env is built, a checkpoint whose actor reads or writes other sizes than the task's."""
    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.evaluation.policy_check import check_checkpoint_sizes, task_sizes

    try:
        check_checkpoint_sizes(checkpoint, state, task_sizes(env_cfg, agent_cfg), task)
    except PolicyLoadError as exc:
        raise CheckpointError(str(exc)) from None


def _check_run_task(checkpoint: Path, task: str) -> None:
    """Refuse a checkpoint whose run (``run.json``) was trained on another task."""
    try:
        trained = json.loads((checkpoint.parent / "run.json").read_text()).get("task")
    except (OSError, ValueError, AttributeError):
        return
    if trained is not None and trained != task:
        raise CheckpointError(f"checkpoint {checkpoint} was trained on task {trained}, not {task}")


def _build_runner(env: Any, agent_cfg: Any, run_dir: Path) -> Any:
    """The rsl-rl runner for the ``VecEnv`` ``env``, logging into ``run_dir`` (as Isaac Lab's train backend does)."""
    from isaaclab_rl.rsl_rl import check_rsl_rl_version, create_rsl_rl_runner, handle_deprecated_rsl_rl_cfg

    import linkage_lab
    from linkage_lab.console import framework_output

    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
    with framework_output("rsl-rl runner"):  # rsl-rl prints its models
        runner = create_rsl_rl_runner(env, agent_cfg, log_dir=str(run_dir))
    runner.add_git_repo_to_log(linkage_lab.__file__)
    return runner


def _start_record(
    record: dict[str, Any], task: str, agent_cfg: Any, overrides: list[str], env: Any, seed: int, device: str
) -> dict[str, Any]:
    """The run record with this session's settings (see :func:`~linkage_lab.runs.write_record`)."""
    record = dict(record)
    record.update(
        task=task,
        experiment=agent_cfg.experiment_name,
        overrides=list(overrides),
        num_envs=int(env.num_envs),
        seed=seed,
        device=device,
        status="running",
    )
    return record


def _write_run_files(run_dir: Path, task: str, env_cfg: Any, agent_cfg: Any, record: dict[str, Any], new: bool) -> None:
    """``run.json`` (Isaac Lab's manifest, for a new run), ``params/`` (this session's configs), the record."""
    from isaaclab_rl.entrypoints.common import dump_train_configs, write_run_manifest

    if new:
        write_run_manifest(str(run_dir), library="rsl_rl", task=task, metadata={"agent": "rsl_rl_cfg_entry_point"})
    dump_train_configs(str(run_dir), env_cfg, agent_cfg)
    write_record(run_dir, record)


def _end_run(
    made: dict[str, Any], record: dict[str, Any], session: dict[str, Any], status: str, last: int | None = None
) -> Path | None:
    """Record how the session ended; remove a new run that ended before its first checkpoint.

    Returns:
        The run folder, or ``None`` when there is none (never made, or removed).
    """
    run_dir: Path | None = made.get("run_dir")
    if run_dir is None or not run_dir.is_dir():
        return None
    newest = latest_checkpoint(run_dir)
    if newest is None and made.get("new"):
        discard_run(run_dir)
        return None
    if not any(entry is session for entry in record.get("sessions", [])):
        return run_dir  # the session stopped before it started training: the record stays as it was
    session.update(ended_at=_now(), status=status, last_iteration=last)
    record.update(status=status)
    if newest is not None:
        record.update(checkpoint=newest.name, last_iteration=int(newest.stem.split("_")[1]))
    write_record(run_dir, record)
    return run_dir


def _result(
    run_dir: Path | None, start: float, first: int, last: int | None, interrupted: bool, point: ResumePoint | None
) -> TrainResult:
    return TrainResult(
        log_dir=run_dir,
        checkpoint=latest_checkpoint(run_dir) if run_dir is not None else None,
        wall_time_s=time.perf_counter() - start,
        first_iteration=first,
        last_iteration=last,
        interrupted=interrupted,
        resumed_from=point.checkpoint if point is not None else None,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

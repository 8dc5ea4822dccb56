"""rsl-rl's learning loop, made interruptible: Ctrl-C or SIGTERM saves the last finished iteration, then stops.

rsl-rl's ``OnPolicyRunner.learn`` saves every ``save_interval`` iterations and at its end; a
``KeyboardInterrupt`` in between loses every iteration since the last save. :func:`run_learning`
runs ``learn`` so that a Ctrl-C stops it at the next safe point: after the env step in progress
(never inside the simulator, TensorBoard's writer or a lock a library holds), or, while the policy
is being updated or a checkpoint written, once that ends (so the saved networks and optimiser are
one iteration's, and no checkpoint is half written). The last finished iteration is then saved
as ``model_<it>.pt``. A second Ctrl-C outside an update or a save stops at once (a stuck step).
SIGTERM (what ``timeout``, ``docker stop`` and job schedulers send) is handled the same way.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from linkage_lab.checkpoints import save_checkpoint
from linkage_lab.console import framework_output, say


@dataclass(frozen=True)
class LearnOutcome:
    """How a learning session ended.

    Attributes:
        first_iteration: The iteration the session started at.
        last_iteration: The last iteration it finished; ``None`` when it finished none.
        checkpoint: The checkpoint of ``last_iteration``; ``None`` when it finished none.
        interrupted: Stopped by Ctrl-C (SIGINT) or SIGTERM before its last planned iteration.
        signum: The signal that stopped it (``None`` when not interrupted).
    """

    first_iteration: int
    last_iteration: int | None
    checkpoint: Path | None
    interrupted: bool
    signum: int | None = None


#: The signals that stop a learning session at its next safe point.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignal(KeyboardInterrupt):
    """A stop asked for by a signal, raised where Python would raise ``KeyboardInterrupt`` for Ctrl-C.

    Attributes:
        signum: ``signal.SIGINT`` or ``signal.SIGTERM``.
    """

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def stop_signum(exc: BaseException) -> int:
    """The signal behind a ``KeyboardInterrupt`` (a plain one is Ctrl-C's SIGINT)."""
    return int(getattr(exc, "signum", signal.SIGINT))


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """For the block, SIGTERM raises :class:`StopSignal` as Ctrl-C raises ``KeyboardInterrupt``, so the
    same clean-up runs for both (a no-op outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: Any) -> None:
        raise StopSignal(signum)

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class InterruptGuard:
    """A SIGINT and SIGTERM handler that stops a learning session at safe points.

    A Ctrl-C (or SIGTERM) is remembered; :meth:`check` (called between env steps) raises it as
    :class:`StopSignal` (a ``KeyboardInterrupt``), and so does the end of the outermost :meth:`critical`
    block. A second signal while one is pending raises at once, except inside a critical block. Outside
    the main thread (where Python cannot install signal handlers) it changes nothing.
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending: int | None = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self._pending is not None and not self._depth:
            self._pending = None
            raise StopSignal(signum)
        # SIGTERM outranks a pending Ctrl-C: the exit status then says the process was terminated.
        self._pending = signum if self._pending is None or signum == signal.SIGTERM else self._pending

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Install the handler for the block; the previous handlers are restored after it."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {signum: signal.signal(signum, self._handle) for signum in STOP_SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def check(self) -> None:
        """Raise a pending signal as :class:`StopSignal` (a no-op inside a critical block)."""
        if self._pending is not None and not self._depth:
            signum, self._pending = self._pending, None
            raise StopSignal(signum)

    @contextlib.contextmanager
    def critical(self) -> Iterator[None]:
        """Hold a Ctrl-C until the block ends (raised then, if the block itself raised nothing)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        self.check()


def run_learning(runner: Any, run_dir: Path, iterations: int, init_at_random_ep_len: bool = False) -> LearnOutcome:
    """Run ``runner.learn`` for ``iterations`` iterations from ``runner.current_learning_iteration``.

    Checkpoints are written atomically into ``run_dir``; on Ctrl-C or SIGTERM the last finished iteration is
    saved (``model_<it>.pt``) and the outcome says ``interrupted``. The runner's TensorBoard writer
    is closed at the end, so the events of a stopped run are on disk.

    Args:
        runner: An rsl-rl runner whose logger writes into ``run_dir``.
        run_dir: The run folder.
        iterations: Iterations to run (at least 1).
        init_at_random_ep_len: Start episodes at random lengths (rsl-rl's exploration option).

    Returns:
        The :class:`LearnOutcome`. A second Ctrl-C (or SIGTERM) while the last checkpoint is written is
        held until the file is complete, then raised as :class:`StopSignal`.
    """
    first = int(runner.current_learning_iteration)
    guard = InterruptGuard()
    finished = 0
    update = runner.alg.update

    def guarded_update() -> Any:
        nonlocal finished
        with guard.critical():
            losses = update()
            finished += 1
        return losses

    def guarded_save(path: str, infos: dict | None = None) -> None:
        with guard.critical():
            save_checkpoint(runner, Path(path))

    env_step = runner.env.step

    def checked_step(actions: torch.Tensor) -> Any:
        stepped = env_step(actions)
        guard.check()
        return stepped

    # Instance attributes shadow the class's methods, which learn() calls through self.
    runner.alg.update = guarded_update
    runner.save = guarded_save
    runner.env.step = checked_step
    progress = _install_progress(runner)
    interrupted = False
    signum = None
    try:
        with guard.installed():
            try:
                # rsl-rl prints a 40-line block per iteration: the framework log's; the console gets one line.
                with framework_output(f"train {run_dir}"):
                    runner.learn(num_learning_iterations=iterations, init_at_random_ep_len=init_at_random_ep_len)
            except KeyboardInterrupt as exc:
                interrupted = True
                signum = stop_signum(exc)
            last = first + finished - 1 if finished else None
            checkpoint = None
            if last is not None:
                runner.current_learning_iteration = last
                checkpoint = Path(run_dir) / f"model_{last}.pt"
                if interrupted or not checkpoint.is_file():
                    guarded_save(str(checkpoint))
    finally:
        del runner.alg.update, runner.save, runner.env.step
        if progress:
            del runner.logger.log
        _close_writer(runner, interrupted)
    return LearnOutcome(first, last, checkpoint, interrupted, signum)


#: Console progress: a line every this many iterations (and the first and last of a session).
PROGRESS_EVERY = 10
#: Episode metrics shown in the progress line, as rsl-rl logs them (label, unit).
PROGRESS_METRICS = {
    "Metrics/base_velocity/error_vel_xy": ("v err", "m/s"),
    "Metrics/base_velocity/error_vel_yaw": ("yaw err", "rad/s"),
}


def progress_line(
    it: int, total_it: int, reward: float | None, length: float | None, metrics: dict, fps: int, eta_s: float
) -> str:
    """One console line of a training iteration (``it`` counts from 0)."""
    parts = [f"iteration {it + 1}/{total_it}"]
    if reward is not None:
        parts.append(f"reward {reward:.2f}")
    if length is not None:
        parts.append(f"episode {length:.0f} steps")
    parts += [f"{label} {metrics[key]:.3f} {unit}" for key, (label, unit) in PROGRESS_METRICS.items() if key in metrics]
    parts.append(f"{fps} steps/s")
    parts.append(f"ETA {int(eta_s) // 60}:{int(eta_s) % 60:02d}")
    return "  ".join(parts)


def _install_progress(runner: Any) -> bool:
    """Wrap the rsl-rl logger's ``log`` so each :data:`PROGRESS_EVERY`-th iteration prints one console line."""
    logger = getattr(runner, "logger", None)
    original = getattr(logger, "log", None)
    if original is None:
        return False
    started = time.perf_counter()

    def log(it: int, start_it: int, total_it: int, collect_time: float, learn_time: float, *args, **kwargs) -> None:
        metrics = {}
        for key in PROGRESS_METRICS:
            values = [float(torch.as_tensor(info[key]).float().mean()) for info in logger.ep_extras if key in info]
            if values:
                metrics[key] = sum(values) / len(values)
        rewards, lengths = list(getattr(logger, "rewbuffer", [])), list(getattr(logger, "lenbuffer", []))
        if not rewards:  # no episode has ended yet: the episode metrics are empty placeholders
            metrics = {}
        original(it, start_it, total_it, collect_time, learn_time, *args, **kwargs)
        done = it + 1 - start_it
        if done == 1 or (it + 1) % PROGRESS_EVERY == 0 or it + 1 >= total_it:
            steps = runner.cfg["num_steps_per_env"] * runner.env.num_envs
            elapsed = time.perf_counter() - started
            say(
                progress_line(
                    it,
                    total_it,
                    sum(rewards) / len(rewards) if rewards else None,
                    sum(lengths) / len(lengths) if lengths else None,
                    metrics,
                    int(steps / max(collect_time + learn_time, 1e-9)),
                    elapsed / done * (total_it - start_it - done),
                )
            )

    logger.log = log
    return True


def _close_writer(runner: Any, interrupted: bool) -> None:
    """Flush and close the logger's writer (rsl-rl leaves TensorBoard's open; an interrupt skips its stop)."""
    logger = getattr(runner, "logger", None)
    writer = getattr(logger, "writer", None)
    if writer is None:
        return
    if interrupted:
        logger.stop_logging_writer()
    if hasattr(writer, "close"):
        writer.close()

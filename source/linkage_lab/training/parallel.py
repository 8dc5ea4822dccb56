"""rsl-rl's ``VecEnv`` over worker processes: one Isaac Lab simulation per CPU core, one learner.

Warp runs CPU kernels serially, so one simulation process keeps one core busy however many envs
it holds (``linkage-lab bench env``: torch threads and solver settings do not change that). With
``workers=W`` the run's envs are split over W worker processes, each an ordinary Isaac Lab env of
its share (seeded ``seed + rank``), stepped in parallel; the learner (rsl-rl's runner, PPO's
update, the policy's inference) stays in the calling process. Observations, rewards, dones and
time-outs pass through shared-memory tensors; a pipe per worker carries the step command and the
episode log. The policy never sees the split: ``env i`` of the run is env ``i - offset[r]`` of
worker ``r``, in rank order, so checkpoints, eval and export are the same as with one process.

Each worker builds its own env, with its own Isaac Lab managers: command curricula and event
schedules count their own envs' steps, as they would in one process (they count steps, not envs).
Episode logs (``extras["log"]``: per-term episode sums, metrics) are averaged over the workers
that report them at a step: each is already a mean over the envs that ended there.
"""

from __future__ import annotations

import signal
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

#: Seconds to wait for a worker's env to be built (kernel compilation on a cold cache takes minutes).
STARTUP_TIMEOUT_S = 1800.0


class WorkerError(RuntimeError):
    """A worker process failed or died; the message names it and carries its error."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build its share of the run's envs (picklable: it crosses a process start).

    Attributes:
        task: Registered task id.
        num_envs: This worker's env count.
        device: Simulation device (``cpu``).
        overrides: The run's hydra overrides.
        seed: This worker's env seed.
        log_dir: The run folder, given to the env config of rank 0 only (Isaac Lab's own outputs).
        clip_actions: rsl-rl's action clip, applied by the worker's ``RslRlVecEnvWrapper``.
    """

    task: str
    num_envs: int
    device: str
    overrides: tuple[str, ...]
    seed: int
    log_dir: str | None
    clip_actions: float | None


def split_envs(num_envs: int, workers: int) -> list[int]:
    """``num_envs`` split over ``workers`` as evenly as possible, larger shares first.

    Raises:
        ValueError: ``workers`` below 1 or above ``num_envs`` (a worker needs at least one env).
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if workers > num_envs:
        raise ValueError(f"{workers} workers need at least {workers} envs, the run has {num_envs}")
    base, extra = divmod(num_envs, workers)
    return [base + (1 if rank < extra else 0) for rank in range(workers)]


def merge_logs(logs: Sequence[dict[str, float] | None]) -> dict[str, float]:
    """Per-key mean of the workers' episode logs, over the workers that report the key."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for log in logs:
        for key, value in (log or {}).items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}


def _as_floats(log: dict[str, Any]) -> dict[str, float]:
    """An Isaac Lab episode log (tensors and numbers) as plain floats, for the pipe."""
    return {key: float(torch.as_tensor(value, dtype=torch.float32).mean()) for key, value in log.items()}


def update_with_threads(runner: Any, threads: int) -> None:
    """Run the PPO update of ``runner`` on ``threads`` torch threads, the rollout on one.

    While the learner updates, the worker processes wait for their next step, so the cores they
    simulate on are free; during the rollout they are not, and the learner's small inference
    batches stay on one thread (a thread pool spinning against the simulations costs more).
    """
    algorithm = runner.alg
    update = algorithm.update

    def threaded_update(*args: Any, **kwargs: Any) -> Any:
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return update(*args, **kwargs)
        finally:
            torch.set_num_threads(previous)

    algorithm.update = threaded_update


class _Buffers:
    """One worker's shared-memory tensors; created in the worker, mapped by the learner."""

    def __init__(self, obs: dict[str, torch.Tensor], num_actions: int):
        num_envs = next(iter(obs.values())).shape[0]
        self.obs = {group: torch.zeros_like(value).share_memory_() for group, value in obs.items()}
        self.actions = torch.zeros(num_envs, num_actions).share_memory_()
        self.rewards = torch.zeros(num_envs).share_memory_()
        self.dones = torch.zeros(num_envs, dtype=torch.long).share_memory_()
        self.time_outs = torch.zeros(num_envs, dtype=torch.bool).share_memory_()
        self.episode_length = torch.zeros(num_envs, dtype=torch.long).share_memory_()

    def write_obs(self, obs: Any) -> None:
        for group, buffer in self.obs.items():
            buffer.copy_(obs[group])


def _worker_main(rank: int, spec: WorkerSpec, conn: Any) -> None:
    """A worker's loop: build the env, answer the learner's commands until ``close``."""
    # Ctrl-C and SIGTERM are the learner's to handle (it saves, then closes the workers); a worker whose
    # learner is gone ends on its closed pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

        from linkage_lab.console import skip_notice
        from linkage_lab.runtime import make_env

        skip_notice()

        def configure(cfg: Any) -> None:
            cfg.seed = spec.seed
            if spec.log_dir is not None:
                cfg.log_dir = spec.log_dir

        with make_env(spec.task, spec.num_envs, spec.device, spec.overrides, env_cfg_hook=configure) as (env, _):
            vec = RslRlVecEnvWrapper(env, clip_actions=spec.clip_actions)
            buffers = _Buffers(dict(vec.get_observations().items()), vec.num_actions)
            buffers.write_obs(vec.get_observations())
            conn.send(("ready", buffers, int(vec.max_episode_length), vec.num_actions))
            _serve(vec, buffers, conn)
    except BaseException:  # noqa: BLE001 - everything goes back to the learner, which raises it
        try:
            conn.send(("error", traceback.format_exc()))
        except (OSError, ValueError):
            pass


def _serve(vec: Any, buffers: _Buffers, conn: Any) -> None:
    """Answer commands: ``step`` (actions from the shared buffer), ``observe``, episode lengths, ``close``."""
    while True:
        command = conn.recv()
        if command == "step":
            obs, rewards, dones, extras = vec.step(buffers.actions)
            buffers.write_obs(obs)
            buffers.rewards.copy_(rewards)
            buffers.dones.copy_(dones)
            if "time_outs" in extras:
                buffers.time_outs.copy_(extras["time_outs"])
            log = extras.get("log")
            conn.send(("stepped", _as_floats(log) if log else None, "time_outs" in extras))
        elif command == "observe":
            buffers.write_obs(vec.get_observations())
            conn.send(("ok",))
        elif command == "get_episode_length":
            buffers.episode_length.copy_(vec.episode_length_buf)
            conn.send(("ok",))
        elif command == "set_episode_length":
            vec.episode_length_buf = buffers.episode_length.clone()
            conn.send(("ok",))
        elif command == "close":
            conn.send(("ok",))
            return
        else:
            raise ValueError(f"unknown worker command {command!r}")


class ParallelVecEnv:
    """An rsl-rl ``VecEnv`` whose envs run in ``workers`` processes (see the module docstring).

    Args:
        task: Registered task id.
        num_envs: Total env count, split over the workers (:func:`split_envs`).
        workers: Number of worker processes (one per core).
        device: Simulation device; the CPU (a GPU steps all envs in one process).
        overrides: Hydra overrides, applied in every worker.
        seed: Seed of worker 0; worker ``r`` uses ``seed + r``.
        env_cfg: The run's resolved env config (what ``cfg`` returns, for rsl-rl's logger and the
            run's ``params/env.yaml``).
        log_dir: The run folder.
        clip_actions: rsl-rl's action clip.

    Raises:
        WorkerError: A worker failed to build its env (its traceback is in the message).
    """

    def __init__(
        self,
        task: str,
        num_envs: int,
        workers: int,
        device: str,
        overrides: Sequence[str],
        seed: int,
        env_cfg: Any,
        log_dir: str | None = None,
        clip_actions: float | None = None,
    ):
        if not str(device).startswith("cpu"):
            raise ValueError(f"workers > 1 runs CPU simulations side by side; device {device!r} steps all envs at once")
        import torch.multiprocessing as mp

        self.sizes = split_envs(num_envs, workers)
        self.num_envs = num_envs
        self.device = device
        self._cfg = env_cfg
        context = mp.get_context("spawn")
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._buffers: list[_Buffers] = []
        try:
            for rank, size in enumerate(self.sizes):
                spec = WorkerSpec(
                    task, size, device, tuple(overrides), seed + rank, log_dir if rank == 0 else None, clip_actions
                )
                parent, child = context.Pipe()
                proc = context.Process(target=_worker_main, args=(rank, spec, child), daemon=True)
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
            lengths, actions = set(), set()
            for rank in range(workers):
                _, buffers, max_episode_length, num_actions = self._receive(rank, "ready", STARTUP_TIMEOUT_S)
                self._buffers.append(buffers)
                lengths.add(max_episode_length)
                actions.add(num_actions)
        except BaseException:
            self.close()
            raise
        self.max_episode_length = lengths.pop()
        self.num_actions = actions.pop()
        self._time_outs = False

    # -- the VecEnv interface --------------------------------------------------------------------

    @property
    def cfg(self) -> Any:
        """The run's env config."""
        return self._cfg

    @property
    def unwrapped(self) -> ParallelVecEnv:
        """This object: the envs themselves live in the workers."""
        return self

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Steps into the current episode of every env, in run order (a copy)."""
        self._command_all("get_episode_length")
        return torch.cat([buffers.episode_length for buffers in self._buffers])

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        """Set every env's episode step (rsl-rl's random episode starts)."""
        for buffers, part in zip(self._buffers, torch.split(torch.as_tensor(value), self.sizes), strict=True):
            buffers.episode_length.copy_(part)
        self._command_all("set_episode_length")

    def get_observations(self) -> Any:
        """The current observations of all envs, as rsl-rl's ``TensorDict``."""
        from tensordict import TensorDict

        self._command_all("observe")
        return TensorDict(self._gather_obs(), batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor) -> tuple[Any, torch.Tensor, torch.Tensor, dict]:
        """Step every worker's envs with its rows of ``actions``; the workers run in parallel."""
        from tensordict import TensorDict

        for buffers, part in zip(self._buffers, torch.split(actions, self.sizes), strict=True):
            buffers.actions.copy_(part)
        for conn in self._conns:
            conn.send("step")
        replies = [self._receive(rank, "stepped") for rank in range(len(self._conns))]
        obs = TensorDict(self._gather_obs(), batch_size=[self.num_envs])
        rewards = torch.cat([buffers.rewards for buffers in self._buffers])
        dones = torch.cat([buffers.dones for buffers in self._buffers])
        extras: dict[str, Any] = {}
        logs = [reply[1] for reply in replies]
        if any(log for log in logs):
            extras["log"] = merge_logs(logs)
        if all(reply[2] for reply in replies):
            extras["time_outs"] = torch.cat([buffers.time_outs for buffers in self._buffers])
        return obs, rewards, dones, extras

    def close(self) -> None:
        """Stop the workers (their envs close); idempotent."""
        for conn in self._conns:
            try:
                conn.send("close")
            except (OSError, ValueError):
                pass
        for conn, proc in zip(self._conns, self._procs, strict=False):
            try:
                if conn.poll(60.0):
                    conn.recv()
            except (OSError, EOFError, ValueError):
                pass
            proc.join(timeout=30.0)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=10.0)
            conn.close()
        self._conns, self._procs = [], []

    # -- plumbing --------------------------------------------------------------------------------

    def _gather_obs(self) -> dict[str, torch.Tensor]:
        groups = self._buffers[0].obs.keys()
        return {group: torch.cat([buffers.obs[group] for buffers in self._buffers]) for group in groups}

    def _command_all(self, command: str) -> None:
        for conn in self._conns:
            conn.send(command)
        for rank in range(len(self._conns)):
            self._receive(rank, "ok")

    def _receive(self, rank: int, expected: str, timeout_s: float | None = None) -> tuple:
        """The next reply of worker ``rank``; a worker error or death raises :class:`WorkerError`."""
        conn, proc = self._conns[rank], self._procs[rank]
        try:
            if timeout_s is not None and not conn.poll(timeout_s):
                raise WorkerError(f"worker {rank} sent nothing within {timeout_s:.0f} s")
            reply = conn.recv()
        except (EOFError, OSError):
            proc.join(timeout=5.0)
            raise WorkerError(f"worker {rank} died (exit code {proc.exitcode})") from None
        if reply[0] == "error":
            raise WorkerError(f"worker {rank} failed:\n{reply[1]}")
        if reply[0] != expected:
            raise WorkerError(f"worker {rank} answered {reply[0]!r}, expected {expected!r}")
        return reply

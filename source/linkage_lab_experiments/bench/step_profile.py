"""Where an env step goes: exclusive time of the physics kernels, launches, actuator and managers.

``linkage-lab bench env --profile`` runs :func:`measure` in a fresh process per env count
(``python -m linkage_lab_experiments.bench.step_profile``). Timers wrap the env's own methods for the duration
of the timed steps, and each keeps its *exclusive* time (its children's time is subtracted), so the
shares add up to the step:

- **physics kernels**, by MuJoCo-Warp / Newton module group: every eagerly launched CPU kernel
  runs inside Warp's ``invoke`` (Warp runs CPU kernels serially), which is timed per kernel; a
  replayed graph (:mod:`linkage_lab.physics.cpu_graph`) runs its kernels in native code, timed as
  one block (profile with ``env.sim.physics.use_cuda_graph=false`` for the kernel groups);
- **physics launch + Python**: the rest of ``sim.step`` — Warp's argument packing and launch
  bookkeeping, Newton's and MuJoCo-Warp's Python between kernels, array allocation and copies;
- the **actuators** (``compute`` of each actuator group: the linkage drive), the rest of the
  scene's write to the simulation and its ``update`` (articulation and sensor data copies);
- Isaac Lab's **managers** (actions, observations, rewards, terminations, commands, events,
  curriculum) and the **reset** of ended episodes;
- **other**: what remains of ``env.step`` (Isaac Lab's step loop, the gym wrappers, the timers).

The timers cost about a microsecond per call (a few hundred kernel calls per env step): the
profiled throughput is printed next to the categories so that cost can be seen.
"""

from __future__ import annotations

import collections
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Kernel groups by the module that defines the kernel (first match wins), then a fallback.
KERNEL_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("physics: constraint solver", ("mujoco_warp._src.solver",)),
    ("physics: constraint rows", ("mujoco_warp._src.constraint",)),
    ("physics: collision", ("mujoco_warp._src.collision", "newton._src.geometry", "newton._src.sim.collide")),
    (
        "physics: rigid-body dynamics",
        (
            "mujoco_warp._src.smooth",
            "mujoco_warp._src.forward",
            "mujoco_warp._src.passive",
            "mujoco_warp._src.derivative",
            "mujoco_warp._src.support",
            "mujoco_warp._src.sensor",
        ),
    ),
    ("physics: Newton <-> MuJoCo-Warp copies", ("newton._src.solvers.mujoco",)),
)
OTHER_KERNELS = "physics: other kernels"
GRAPH = "physics: kernels, graph replay"
LAUNCH = "physics: launch + Python"

#: Exclusive-time categories in display order.
CATEGORIES = (
    *(name for name, _ in KERNEL_GROUPS),
    OTHER_KERNELS,
    GRAPH,
    LAUNCH,
    "actuators (linkage drive)",
    "scene: write to sim",
    "scene: update (data copies)",
    "managers: actions",
    "managers: observations",
    "managers: rewards",
    "managers: terminations",
    "managers: commands",
    "managers: events",
    "managers: curriculum",
    "episode resets",
    "other",
)


def kernel_group(module_name: str) -> str:
    """The category of a kernel defined in ``module_name``."""
    for name, prefixes in KERNEL_GROUPS:
        if module_name.startswith(prefixes):
            return name
    return OTHER_KERNELS


class ExclusiveTimers:
    """Nested timers that charge each span to its own category minus its children's time.

    ``wrap(obj, attr, category)`` replaces a method with a timed one; :meth:`restore` undoes
    every replacement. Times are summed per category in :attr:`seconds`; calls in :attr:`calls`.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: dict[str, int] = collections.defaultdict(int)
        self.enabled = False
        self._stack: list[float] = []  # children's time of each open span
        self._undo: list[tuple[Any, str, Any, bool]] = []

    def timed(self, category: str | Callable[..., str], func: Callable[..., Any]) -> Callable[..., Any]:
        """``func`` timed under ``category`` (or under ``category(*args)`` when it is callable)."""

        def run(*args: Any, **kwargs: Any) -> Any:
            if not self.enabled:
                return func(*args, **kwargs)
            name = category(*args) if callable(category) else category
            self._stack.append(0.0)
            start = self.clock()
            try:
                return func(*args, **kwargs)
            finally:
                elapsed = self.clock() - start
                children = self._stack.pop()
                self.seconds[name] += elapsed - children
                self.calls[name] += 1
                if self._stack:
                    self._stack[-1] += elapsed

        return run

    def wrap(self, obj: Any, attr: str, category: str | Callable[..., str]) -> None:
        """Time ``obj.attr`` (an instance or module attribute) under ``category``."""
        had_own = attr in vars(obj) if hasattr(obj, "__dict__") else False
        original = getattr(obj, attr)
        self._undo.append((obj, attr, vars(obj).get(attr) if had_own else None, had_own))
        setattr(obj, attr, self.timed(category, original))

    def restore(self) -> None:
        """Put every wrapped attribute back."""
        for obj, attr, original, had_own in reversed(self._undo):
            if had_own:
                setattr(obj, attr, original)
            else:
                delattr(obj, attr)
        self._undo.clear()


def shares(seconds: dict[str, float], total_s: float) -> dict[str, float]:
    """Each category's share of ``total_s``, in :data:`CATEGORIES` order; what no timer saw goes to ``other``."""
    out = {name: seconds.get(name, 0.0) / total_s for name in CATEGORIES}
    out["other"] = max(0.0, 1.0 - sum(value for name, value in out.items() if name != "other"))
    return out


def install(env: Any, timers: ExclusiveTimers) -> None:
    """Wrap the methods of an Isaac Lab ``ManagerBasedRLEnv`` (and Warp's CPU ``invoke``) with ``timers``."""
    import warp
    import warp._src.context as warp_context

    timers.wrap(
        warp_context,
        "invoke",
        lambda kernel, *_: kernel_group(getattr(kernel.func, "__module__", "") or ""),
    )
    timers.wrap(warp, "capture_launch", GRAPH)  # looked up as ``wp.capture_launch`` at each call
    timers.wrap(env.sim, "step", LAUNCH)
    scene = env.scene
    timers.wrap(scene, "write_data_to_sim", "scene: write to sim")
    timers.wrap(scene, "update", "scene: update (data copies)")
    for asset in scene.articulations.values():
        for actuator in getattr(asset, "actuators", {}).values():
            timers.wrap(actuator, "compute", "actuators (linkage drive)")
    managers = {
        "action_manager": ("managers: actions", ("process_action", "apply_action")),
        "observation_manager": ("managers: observations", ("compute",)),
        "reward_manager": ("managers: rewards", ("compute",)),
        "termination_manager": ("managers: terminations", ("compute",)),
        "command_manager": ("managers: commands", ("compute",)),
        "event_manager": ("managers: events", ("apply",)),
        "curriculum_manager": ("managers: curriculum", ("compute",)),
    }
    for attr, (label, methods) in managers.items():
        manager = getattr(env, attr, None)
        for method in methods if manager is not None else ():
            timers.wrap(manager, method, label)
    timers.wrap(env, "_reset_idx", "episode resets")


def measure(task: str, num_envs: int, steps: int, warmup: int, overrides: Sequence[str]) -> dict:
    """Profile ``steps`` zero-action env steps of ``task`` after ``warmup``; exclusive seconds and shares."""
    from linkage_lab.runtime import make_env
    from linkage_lab_experiments.bench.env_worker import timed_steps, warm_zero_actions

    timers = ExclusiveTimers()
    with make_env(task, num_envs=num_envs, overrides=list(overrides)) as (env, _):
        actions = warm_zero_actions(env, warmup)
        plain_s = timed_steps(env, actions, steps)
        install(env.unwrapped, timers)
        timers.enabled = True
        profiled_s = timed_steps(env, actions, steps)
        timers.enabled = False
        timers.restore()
    return {
        "task": task,
        "num_envs": num_envs,
        "steps": steps,
        "env_steps_per_s": num_envs * steps / plain_s,
        "profiled_env_steps_per_s": num_envs * steps / profiled_s,
        "ms_per_env_step": 1e3 * profiled_s / steps,
        "seconds": dict(timers.seconds),
        "calls_per_env_step": {name: count / steps for name, count in timers.calls.items()},
        "shares": shares(timers.seconds, profiled_s),
        "overrides": list(overrides),
    }


def physics_share(row: dict) -> float:
    """The share of the step spent in physics (kernels and their launches)."""
    return sum(value for name, value in row["shares"].items() if name.startswith("physics"))


def format_table(rows: Sequence[dict]) -> str:
    """Categories as lines, one column per profiled (task, env count): percent of the env step."""
    heads = [f"{_short(row['task'])}/{row['num_envs']}" for row in rows]
    lines = [f"{'share of an env step (%)':38s}" + "".join(f"{head:>16s}" for head in heads)]
    for name in CATEGORIES:
        lines.append(f"{name:38s}" + "".join(f"{100 * row['shares'][name]:16.1f}" for row in rows))
    lines.append(f"{'physics, all':38s}" + "".join(f"{100 * physics_share(row):16.1f}" for row in rows))
    lines.append(f"{'ms per env step (profiled)':38s}" + "".join(f"{row['ms_per_env_step']:16.1f}" for row in rows))
    lines.append(f"{'env-steps/s, plain':38s}" + "".join(f"{row['env_steps_per_s']:16,.0f}" for row in rows))
    lines.append(
        f"{'env-steps/s, profiled':38s}" + "".join(f"{row['profiled_env_steps_per_s']:16,.0f}" for row in rows)
    )
    return "\n".join(lines)


def _short(task: str) -> str:
    return task.removeprefix("LinkageLab-Velocity-Flat-")


def write_results(rows: Sequence[dict], out_dir: Path, stem: str) -> tuple[Path, Path]:
    """``<stem>.json`` and ``<stem>.png`` (one stacked bar of ms per env step per profiled run)."""
    from matplotlib.figure import Figure

    from linkage_lab.io import save_figure_atomic, write_json_atomic

    json_path = write_json_atomic(Path(out_dir) / f"{stem}.json", {"results": list(rows)})
    fig = Figure(figsize=(12, 1.6 + 0.45 * len(rows)))
    ax = fig.subplots()
    labels = [_label(row) for row in rows]
    left = [0.0] * len(rows)
    for index, name in enumerate(CATEGORIES):
        widths = [row["shares"][name] * row["ms_per_env_step"] for row in rows]
        if not any(width > 0 for width in widths):
            continue
        hatch = "//" if index >= 10 else None
        ax.barh(labels, widths, left=left, label=name, color=f"C{index % 10}", hatch=hatch, edgecolor="white")
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("ms per env step (all envs of the process), exclusive time")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Where an env step goes (zero actions, one process, one torch thread)", fontsize=10)
    fig.tight_layout()
    return json_path, save_figure_atomic(fig, Path(out_dir) / f"{stem}.png")


def _label(row: dict) -> str:
    """``Limit, 64 envs`` plus the last part of each override key: ``[use_cuda_graph=false]``."""
    label = f"{_short(row['task'])}, {row['num_envs']} envs"
    overrides = [token.rpartition(".")[2] for token in row.get("overrides", [])]
    return label + (f" [{' '.join(overrides)}]" if overrides else "")


def main(argv: list[str] | None = None) -> int:
    from linkage_lab_experiments.bench.env_worker import worker_main

    return worker_main(measure, 100, argv)


if __name__ == "__main__":
    sys.exit(main())

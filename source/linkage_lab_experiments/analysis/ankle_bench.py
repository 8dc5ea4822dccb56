"""Timing of the batched ankle kinematics: IK + Jacobian and warm-started FK for many ankles."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch

from linkage_lab.kinematics.rsu_ankle import ik_and_jacobian, inverse_kinematics
from linkage_lab.kinematics.rsu_fk import forward_kinematics
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry
from linkage_lab.robots.ankles import load_ankle_geometry

#: Targets on a 2-core CPU (ms) for 8,192 ankles.
TARGET_MS = {"ik_jacobian": 0.5, "fk": 2.0}
#: FK tolerance per dtype (rad): float32 cannot resolve 1e-9.
FK_TOL = {torch.float64: 1e-9, torch.float32: 1e-5}
#: Warm start: the previous control step, 20 ms earlier, at up to this joint speed (rad/s).
CONTROL_DT_S = 0.02
JOINT_SPEED_RADS = 4.0


@contextlib.contextmanager
def _threads(count: int | None) -> Iterator[None]:
    previous = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _time_ms(fn: Callable[[], Any], repeats: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - start))
    return times


def run(
    num_ankles: int = 8192,
    repeats: int = 50,
    geometry: RSUAnkleGeometry | None = None,
    dtypes: tuple[str, ...] = ("float64", "float32"),
    threads: int | None = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Time IK + J and FK for ``num_ankles`` ankles at once on the CPU.

    Poses are uniform over the motion range. FK starts from the previous control step: the
    true pose minus a uniform random change of up to ``JOINT_SPEED_RADS × CONTROL_DT_S`` per axis.

    Args:
        num_ankles: Batch size.
        repeats: Timed calls per measurement (after 3 warm-up calls).
        geometry: The ankle; ``None``: the config's default (``load_ankle_geometry()``).
        dtypes: Torch dtypes to time, by name.
        threads: Torch intra-op threads during the timing (restored after); ``None`` leaves them.
            One thread is fastest for this size on a shared 2-core machine.
        seed: Random seed of the poses.

    Returns:
        ``{"num_ankles", "repeats", "threads", "preset", "targets_ms", "results": {dtype: {...}}}``,
        per dtype: ``ik_jacobian_ms`` and ``fk_ms`` (median), ``*_min_ms``, ``fk_iterations``,
        ``fk_max_error_rad``, ``fk_tol_rad``, ``fk_all_converged``, ``fk_mixed_precision`` (float64
        FK pre-iterates in float32) and ``warm_start_max_rad``.
    """
    geometry = load_ankle_geometry() if geometry is None else geometry
    generator = torch.Generator().manual_seed(seed)
    low = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=torch.float64)
    high = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=torch.float64)
    joint_pos = low + (high - low) * torch.rand(num_ankles, 2, generator=generator, dtype=torch.float64)
    change = (
        JOINT_SPEED_RADS * CONTROL_DT_S * (2 * torch.rand(num_ankles, 2, generator=generator, dtype=torch.float64) - 1)
    )
    previous = joint_pos - change
    motor_pos = inverse_kinematics(geometry, joint_pos)
    results: dict[str, Any] = {}
    with _threads(threads):
        for name in dtypes:
            dtype = getattr(torch, name)
            pose, start, motors, tol = (
                joint_pos.to(dtype),
                previous.to(dtype),
                motor_pos.to(dtype),
                FK_TOL[dtype],
            )
            ik_times = _time_ms(lambda p=pose: ik_and_jacobian(geometry, p), repeats)
            fk_times = _time_ms(lambda m=motors, s=start, t=tol: forward_kinematics(geometry, m, s, tol=t), repeats)
            fk = forward_kinematics(geometry, motors, start, tol=tol)
            results[name] = {
                "ik_jacobian_ms": statistics.median(ik_times),
                "ik_jacobian_min_ms": min(ik_times),
                "fk_ms": statistics.median(fk_times),
                "fk_min_ms": min(fk_times),
                "fk_iterations": fk.iterations,
                "fk_max_error_rad": float((fk.joint_pos.double() - joint_pos).abs().max()),
                "fk_tol_rad": tol,
                "fk_all_converged": bool(fk.converged.all()),
                "fk_mixed_precision": dtype == torch.float64,
                "warm_start_max_rad": float(change.abs().max()),
            }
    return {
        "num_ankles": num_ankles,
        "repeats": repeats,
        "threads": torch.get_num_threads() if threads is None else threads,
        "preset": geometry.preset,
        "device": "cpu",
        "targets_ms": dict(TARGET_MS),
        "results": results,
    }


def format_report(result: dict[str, Any]) -> str:
    """The benchmark result as a small table for a person."""
    lines = [
        f"Ankle kinematics, {result['num_ankles']} ankles at once ({result['preset']}, {result['device']}, "
        f"{result['threads']} thread(s), median of {result['repeats']})",
        f"  {'dtype':<9}{'IK+J ms':>9}{'FK ms':>8}{'FK iters':>10}{'FK max err':>12}{'tol':>8}",
    ]
    for name, row in result["results"].items():
        lines.append(
            f"  {name:<9}{row['ik_jacobian_ms']:>9.3f}{row['fk_ms']:>8.3f}{row['fk_iterations']:>10d}"
            f"{row['fk_max_error_rad']:>12.1e}{row['fk_tol_rad']:>8.0e}"
            + ("" if row["fk_all_converged"] else "  (FK NOT CONVERGED)")
        )
    targets = result["targets_ms"]
    lines.append("  FK warm-started one 20 ms control step away; float64 FK pre-iterates in float32")
    lines.append(f"  targets: IK+J ≤ {targets['ik_jacobian']} ms, FK ≤ {targets['fk']} ms")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_report(run()))

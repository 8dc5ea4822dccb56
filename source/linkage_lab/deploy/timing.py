"""The runtime's clock and console: waiting for a tick, per-tick timing statistics, velocity keys from a terminal."""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

#: The last stretch before a tick that :func:`wait_until` spins instead of sleeping (s): a sleep overshoots by up to a
#: millisecond or two on a loaded machine, a spin of this length costs 5 % of one core at 50 Hz.
SPIN_S = 1e-3


def wait_until(deadline: float) -> None:
    """Return at ``deadline`` (monotonic s): sleep until :data:`SPIN_S` before it, then spin."""
    remaining = deadline - time.monotonic()
    if remaining > SPIN_S:
        time.sleep(remaining - SPIN_S)
    while time.monotonic() < deadline:
        pass


class TimingStats:
    """Per-tick timing of a run, summarised as percentiles (ms)."""

    def __init__(self, period_s: float):
        self.period_s = period_s
        self.columns: dict[str, list[float]] = {"period": [], "sample_age": [], "latency": [], "policy": []}
        self.misses = 0

    def add(self, period_s, age_s, latency_s, policy_s, missed: bool) -> None:
        for name, value in (("period", period_s), ("sample_age", age_s), ("latency", latency_s)):
            if value is not None:
                self.columns[name].append(value)
        if policy_s:
            self.columns["policy"].append(policy_s)
        self.misses += int(missed)

    def summary(self) -> dict[str, Any]:
        return timing_table({k: np.asarray(v) for k, v in self.columns.items()}, self.misses, self.period_s)


def timing_table(columns: dict[str, np.ndarray], misses: int, period_s: float) -> dict[str, Any]:
    """p50 / p99 / max (ms) of each timing column, the deadline misses, and whether the loop period's p99 lies
    within 10 % of the control period."""
    table: dict[str, Any] = {"control_period_ms": 1e3 * period_s, "deadline_misses": int(misses)}
    for name, values in columns.items():
        values = values[np.isfinite(values)] if len(values) else values
        if len(values) == 0:
            table[name] = None
            continue
        table[name] = {
            "count": int(len(values)),
            "p50_ms": float(1e3 * np.percentile(values, 50)),
            "p99_ms": float(1e3 * np.percentile(values, 99)),
            "max_ms": float(1e3 * values.max()),
        }
    period = table.get("period")
    table["period_p99_within_10pct"] = None if not period else abs(period["p99_ms"] - 1e3 * period_s) <= 100 * period_s
    return table


class Keyboard:
    """Velocity keys from the terminal: w/s forward ±0.1 m/s, a/d yaw ±0.1 rad/s, space stop, q quit."""

    STEP = 0.1

    def __init__(self, fd: int, saved: Any):
        self.fd, self.saved = fd, saved

    @classmethod
    def open(cls) -> Keyboard | None:
        """Raw keys from stdin when it is a terminal, else ``None``."""
        if not sys.stdin.isatty():
            return None
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        print("[deploy] keys: w/s forward +-0.1 m/s, a/d turn +-0.1 rad/s, space stop, q quit", flush=True)
        return cls(fd, saved)

    def update(self, command: np.ndarray) -> tuple[np.ndarray, bool]:
        """The command after the keys pressed since the last call, and whether q was pressed."""
        import os
        import select

        command = command.copy()
        while select.select([self.fd], [], [], 0.0)[0]:
            key = os.read(self.fd, 1).decode(errors="ignore").lower()
            if key == "q":
                return command, True
            steps = {"w": (0, 1), "s": (0, -1), "a": (2, 1), "d": (2, -1)}
            if key in steps:
                axis, sign = steps[key]
                command[axis] = round(command[axis] + sign * self.STEP, 3)
            elif key == " ":
                command[:] = 0.0
        return command, False

    def close(self) -> None:
        import termios

        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

"""``linkage-lab bench deploy``: the runtime against the simulated robot in real time, both on this machine.

The simulated robot runs as its own process (``linkage-lab deploy robot``), the runtime in this one, on a DDS
domain of their own. Reported: the loop's timing (period p50 / p99 / max, sample age, sample → target latency,
the policy step, deadline misses) from the runtime's recording, the walk (mean forward speed over the policy's
time after its first second, falls) from the robot's truth log, and ``sim2sim`` of the same bundle at the same
command for the same time, run afterwards in this process: the same robot-side code without DDS or a clock.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Seconds of robot time the soft start takes, and the policy's first second, left out of the walk's mean.
_SOFT_START_S, _SETTLE_S = 2.0, 1.0


def run_deploy_bench(
    bundle: str | Path, seconds: float, command: tuple[float, float], domain: int = 77, out: Path | None = None
) -> dict[str, Any]:
    """The measurement (see the module); ``out``: keep the recording, its PNG and the robot's log there."""
    from linkage_lab.deploy.report import report
    from linkage_lab.deploy.runtime import DeployRuntime, RunSettings
    from linkage_lab.deploy.sim_robot import walk_summary
    from linkage_lab.sim2sim.bundle import load_bundle
    from linkage_lab.sim2sim.runner import run_sim2sim

    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="deploy_bench_"))
    folder.mkdir(parents=True, exist_ok=True)
    robot = load_bundle(bundle).robot
    node = [sys.executable, "-m", "linkage_lab.cli.main", "deploy", "robot", "--robot", robot]
    node += ["--domain", str(domain), "--log", str(folder / "robot_truth.json")]
    process = subprocess.Popen(node, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    settings = RunSettings(
        domain=domain,
        duration_s=seconds,
        command=(command[0], 0.0, command[1]),
        record=folder / "run.mcap",
        keyboard=False,
        verbose=False,
        wait_s=30.0,
    )
    try:
        result = DeployRuntime(bundle, settings).run()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    table = report(folder / "run.mcap")
    log = json.loads((folder / "robot_truth.json").read_text())
    # The robot's clock starts at the first target (the soft start's); the policy runs from 2 s to 2 + seconds.
    walk = walk_summary(log, _SOFT_START_S + _SETTLE_S, _SOFT_START_S + seconds)
    # sim2sim twice: without latency, and with the runtime's measured median sample -> target latency as the age of
    # the sample the policy acts on (the same loop without DDS, a clock or a second process).
    latency_s = round(table["latency"]["p50_ms"] * 1e-3, 3) if table.get("latency") else 0.0
    sim2sim = {}
    for name, delays in (("no_latency", (0.0, 0.0)), ("measured_latency", (latency_s, 0.0))):
        reference = run_sim2sim(bundle, command, duration_s=seconds, delays_s=delays)
        sim2sim[name] = {
            "observation_delay_s": delays[0],
            "falls": reference["falls"],
            "mean_forward_mps": reference["tracking"]["mean_forward_speed_mps"],
            "lin_vel_xy_rms_mps": reference["tracking"]["lin_vel_xy_rms_mps"],
        }
    return {
        "bundle": str(bundle),
        "robot": robot,
        "command": {"lin_vel_x_mps": command[0], "ang_vel_z_radps": command[1]},
        "seconds": seconds,
        "exit_code": result.exit_code,
        "ended": result.reason,
        "timing": {k: v for k, v in table.items() if k not in ("states",)},
        "states": table["states"],
        "walk": walk,
        "sim2sim": sim2sim,
        "files": str(folder),
    }


def format_bench(result: dict[str, Any]) -> str:
    """The measurement as a few lines."""
    from linkage_lab.deploy.report import format_table

    walk = result["walk"]
    lines = [
        format_table({**result["timing"], "states": result["states"]}),
        f"at {result['command']['lin_vel_x_mps']:g} m/s: through the runtime "
        f"{walk.get('mean_forward_mps', float('nan')):.3f} m/s (fell: {walk.get('fell')})",
    ]
    for name, ref in result["sim2sim"].items():
        lines.append(
            f"  sim2sim, {name.replace('_', ' ')} ({1e3 * ref['observation_delay_s']:.0f} ms): "
            f"{ref['mean_forward_mps']:.3f} m/s (falls: {ref['falls']})"
        )
    return "\n".join(lines)

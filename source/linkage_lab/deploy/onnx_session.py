"""The ONNX sessions of the robot-side code: one thread each.

A control loop runs a handful of small graphs per tick (the policy, a gait prior, an ankle bridge's maps). On
onnxruntime's defaults each session keeps a pool of threads per core that spin between calls; beside the motor
drivers, the estimator and (in sim) the simulated robot on a small computer those spinning threads steal the loop's
core. One intra-op and one inter-op thread per session: each graph is a few kFLOP, faster run inline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(path: str | Path) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU provider with one thread, no spinning."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

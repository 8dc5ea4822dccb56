"""A residual policy on the robot: the gait prior as ONNX, and the numpy code that composes the targets.

The export side (:func:`write_gait_graph`, :func:`gait_metadata`) traces the task's own
:class:`~linkage_lab.gait.commanded.CommandedBipedGait`; the robot side
(:class:`ResidualGaitComposer`) needs numpy and onnxruntime only.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from linkage_lab.deploy.onnx_session import cpu_session
from linkage_lab.io import write_bytes_atomic

if TYPE_CHECKING:
    from linkage_lab.gait.commanded import CommandedBipedGait

GAIT_FILE = "gait.onnx"
#: ONNX opset of the gait graph (the legacy exporter traces its plain ops exactly).
OPSET = 17
#: Graph inputs, in order: name → (width, meaning).
GAIT_INPUTS: dict[str, tuple[int, str]] = {
    "gait_state": (3, "phase (rad, [0, 2π)), stride scale, stepping scale; [0, 0, 0] after a reset"),
    "command": (3, "velocity command v_x, v_y (m/s, base frame), ω_z (rad/s), as in the policy observation"),
    "projected_gravity_b": (3, "gravity direction in the base frame (unit vector; (0, 0, -1) upright)"),
    "ang_vel_b": (3, "base angular velocity in the base frame (rad/s), the IMU gyro"),
    "lin_vel_b": (3, "base linear velocity in the base frame (m/s), the state estimator's"),
}
#: Graph outputs: name → meaning (the joint count comes from the metadata).
GAIT_OUTPUTS: dict[str, str] = {
    "joint_targets": "the gait's joint targets (rad), in the policy's joint order (metadata joint_names)",
    "next_gait_state": "gait_state for the next control step",
}
#: The policy's view of the gait state (its observation term), in order.
OBSERVATION_VALUES = ("sin(phase)", "cos(phase)", "stride_scale", "stepping_scale")

GAIT_DOC = """\
The policy's actions are corrections to a scripted gait (`gait.onnx`), not joint targets. Each
control step, with `state` = `residual_gait.initial_state` after a reset:

1. Observation: the term `residual_gait.observation_term` of the layout is
   `(sin φ, cos φ, s, a)` of the current `state = (φ, s, a)`; the rest as listed above.
2. `action = policy(obs)`.
3. `gait_targets, next_state = gait(state, command', projected_gravity_b, ang_vel_b, lin_vel_b)`
   (the same command and IMU values as in the observation, unscaled and without noise), where
   `command'` is the command with its yaw rate `ω_z + K e`: with `K` =
   `residual_gait.command.yaw_integral_gain_per_s` above 0, `e` (0 after a reset) becomes
   `clip(e + (ω_z − ang_vel_b[2]) dt, ±yaw_integral_limit_rad)` while the command asks to turn (`|ω_z|`
   above `yaw_deadband_rads`) and 0 otherwise: the heading the robot has fallen behind its yaw-rate
   command pulls the gait's turn until it follows.
4. `q* = clip(gait_targets + action_scale * a, action_target_clip)` (rad), then the joint PD, with
   `a = clip(action, ±action_clip)`, or zeros if any entry of `action` is not finite (the gait alone).
5. `state = next_state`.

`gait.onnx` holds the clock too: the phase runs at the gait frequency while the robot steps,
the stride follows the forward command (rate-limited), and on a zero command the robot stops
stepping and stands in the gait's crouch. With `residual_gait.command.turn_per_yaw_rate_s` above 0 the
gait also turns: each step swings both hip yaws by that times the yaw-rate command.
`linkage_lab.deploy.residual_gait.ResidualGaitComposer`
is this loop in numpy + onnxruntime.
"""


def gait_metadata(
    module: CommandedBipedGait,
    command_name: str,
    observation_term: str,
    gait_parameters: dict[str, Any],
    command_parameters: dict[str, Any],
) -> dict[str, Any]:
    """The bundle's ``residual_gait`` entry: the graph's I/O, its state and its parameters."""
    return {
        "file": GAIT_FILE,
        "inputs": [
            {"name": name, "shape": [1, width], "dtype": "float32", "meaning": meaning}
            for name, (width, meaning) in GAIT_INPUTS.items()
        ],
        "outputs": [
            {"name": "joint_targets", "shape": [1, len(module.joint_names)], "dtype": "float32"},
            {"name": "next_gait_state", "shape": [1, 3], "dtype": "float32"},
        ],
        "initial_state": [0.0, 0.0, 0.0],
        "state": ["phase_rad", "stride_scale", "stepping_scale"],
        "command_name": command_name,
        "observation_term": observation_term,
        "observation": list(OBSERVATION_VALUES),
        "joint_names": list(module.joint_names),
        "control_period_s": module.control_period_s,
        "frequency_hz": module.gait.cfg.frequency_hz,
        "speed_per_stride_mps": module.speed_per_stride_mps,
        "in_place_speed_mps": module.command_cfg.in_place_speed_mps,
        "stride_ramp_time_s": module.stride_ramp_time_s,
        "swing_time_s": module.swing_time_s(),
        "gait": gait_parameters,
        "command": command_parameters,
    }


def write_gait_graph(module: CommandedBipedGait, path: Path) -> Path:
    """Trace ``module`` to ONNX (float32, dynamic batch), check it and write it atomically."""
    import io
    import warnings

    import onnx
    import torch

    module = module.to("cpu").eval()
    example = tuple(torch.zeros(2, width) for width, _ in GAIT_INPUTS.values())
    example[2][:, 2] = -1.0  # upright, so the trace runs through ordinary values
    names = [*GAIT_INPUTS, *GAIT_OUTPUTS]
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the legacy TorchScript exporter is deprecated
        torch.onnx.export(
            module,
            example,
            buffer,
            input_names=list(GAIT_INPUTS),
            output_names=list(GAIT_OUTPUTS),
            dynamic_axes={name: {0: "batch"} for name in names},
            opset_version=OPSET,
            dynamo=False,
        )
    model = onnx.load_from_string(buffer.getvalue())
    onnx.helper.set_model_props(
        model,
        {
            "linkage_lab.joint_names": json.dumps(list(module.joint_names)),
            "linkage_lab.control_period_s": repr(module.control_period_s),
        },
    )
    model.doc_string = "linkage-lab gait prior: (gait_state, command, IMU) -> joint targets, next gait_state"
    onnx.checker.check_model(model, full_check=True)
    return write_bytes_atomic(Path(path), model.SerializeToString())


def gait_graph_parity(module: CommandedBipedGait, path: Path, samples: int = 64, seed: int = 0) -> float:
    """Max |onnxruntime − torch| of both outputs on random states, commands and IMU values."""
    import onnxruntime as ort
    import torch

    generator = torch.Generator().manual_seed(seed)

    def uniform(low: float, high: float, *shape: int) -> torch.Tensor:
        return low + (high - low) * torch.rand(*shape, generator=generator)

    state = torch.stack(
        (uniform(0.0, 2 * math.pi, samples), uniform(-1.0, 1.0, samples), uniform(0.0, 1.0, samples)), dim=-1
    )
    command = uniform(-0.8, 0.8, samples, 3)
    tilt = torch.tensor([0.0, 0.0, -1.0]) + uniform(-0.3, 0.3, samples, 3)
    inputs = (
        state,
        command,
        tilt / tilt.norm(dim=-1, keepdim=True),
        uniform(-2, 2, samples, 3),
        uniform(-1, 1, samples, 3),
    )
    module = module.to("cpu").eval()
    with torch.no_grad():
        reference = module(*inputs)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outputs = session.run(None, {name: value.numpy() for name, value in zip(GAIT_INPUTS, inputs)})
    return max(float((torch.from_numpy(out) - ref).abs().max()) for out, ref in zip(outputs, reference))


class ResidualGaitComposer:
    """Robot side of a residual bundle: the gait state, its observation and the composed joint targets.

    Args:
        bundle_dir: An exported bundle with ``metadata.json`` (holding ``residual_gait``) and ``gait.onnx``.

    Raises:
        ValueError: The bundle's policy is not a residual one.
    """

    def __init__(self, bundle_dir: Path):

        bundle_dir = Path(bundle_dir)
        metadata = json.loads((bundle_dir / "metadata.json").read_text())
        spec = metadata.get("residual_gait")
        if spec is None:
            raise ValueError(f"{bundle_dir} holds no residual gait (metadata.json has no residual_gait)")
        self.session = cpu_session(bundle_dir / spec["file"])
        self.action_scale = np.asarray(metadata["action_scale"], dtype=np.float32)
        clip_value = metadata.get("action_clip")
        self.action_clip = None if clip_value is None else float(clip_value)
        clip = np.asarray(metadata["action_target_clip"], dtype=np.float32)
        self.target_lower, self.target_upper = clip[:, 0], clip[:, 1]
        self.initial_state = np.asarray(spec["initial_state"], dtype=np.float32)
        self.state = self.initial_state.copy()
        command = spec.get("command", {})
        self.yaw_integral_gain_per_s = float(command.get("yaw_integral_gain_per_s", 0.0))
        self.yaw_integral_limit_rad = float(command.get("yaw_integral_limit_rad", 0.0))
        self.yaw_deadband_rads = float(command.get("yaw_deadband_rads", 0.0))
        self.control_period_s = float(spec["control_period_s"])
        #: The heading the gait has fallen behind its yaw-rate command (rad; step 3 of the bundle's README).
        self.yaw_integral_rad = 0.0

    def reset(self) -> None:
        """Back to phase 0, stride 0, standing, no heading behind (as after an env reset)."""
        self.state = self.initial_state.copy()
        self.yaw_integral_rad = 0.0

    def gait_command(self, command: np.ndarray, ang_vel_b: np.ndarray) -> np.ndarray:
        """The command the gait turns on: ``ω_z + K_ψ e`` with the heading integral ``e`` advanced one step
        (``linkage_lab.gait.commanded.yaw_rate_with_integral``, which training runs); the command itself when
        ``K_ψ`` is 0."""
        command = np.asarray(command, dtype=np.float64).reshape(-1).copy()
        if self.yaw_integral_gain_per_s <= 0.0:
            return command
        turning = abs(command[2]) > self.yaw_deadband_rads
        yaw_rate = float(np.asarray(ang_vel_b, dtype=np.float64).reshape(-1)[2])
        limit = self.yaw_integral_limit_rad
        stepped = min(max(self.yaw_integral_rad + (command[2] - yaw_rate) * self.control_period_s, -limit), limit)
        self.yaw_integral_rad = stepped if turning else 0.0
        command[2] += self.yaw_integral_gain_per_s * self.yaw_integral_rad
        return command

    def observation(self) -> np.ndarray:
        """``(sin φ, cos φ, s, a)``: the gait's term of the policy observation, float32 ``(4,)``."""
        phase, stride, stepping = self.state
        return np.array([math.sin(phase), math.cos(phase), stride, stepping], dtype=np.float32)

    def joint_targets(
        self,
        action: np.ndarray,
        command: np.ndarray,
        projected_gravity_b: np.ndarray,
        ang_vel_b: np.ndarray,
        lin_vel_b: np.ndarray,
    ) -> np.ndarray:
        """``q* = clip(gait + scale · a)`` (rad) for this step, and the gait state advanced.

        As in training, ``a`` is ``action`` clipped to ``±action_clip``, or zeros (the gait alone)
        when any entry of ``action`` is not finite.
        """
        feeds = {
            "gait_state": self.state,
            "command": self.gait_command(command, ang_vel_b),
            "projected_gravity_b": projected_gravity_b,
            "ang_vel_b": ang_vel_b,
            "lin_vel_b": lin_vel_b,
        }
        feeds = {name: np.asarray(value, dtype=np.float32).reshape(1, -1) for name, value in feeds.items()}
        gait_targets, next_state = self.session.run(None, feeds)
        residual = np.asarray(action, dtype=np.float32)
        residual = residual if np.isfinite(residual).all() else np.zeros_like(residual)
        if self.action_clip is not None:
            residual = np.clip(residual, -self.action_clip, self.action_clip)
        self.state = next_state[0]
        return np.clip(gait_targets[0] + self.action_scale * residual, self.target_lower, self.target_upper)

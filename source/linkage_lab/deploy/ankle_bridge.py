"""Marvin's ankle conversion layer (docs/design/ankle_linkage.md §8) as ONNX graphs: no Python needed on the robot."""

from __future__ import annotations

import io
from pathlib import Path
from typing import cast

import torch

from linkage_lab.io import write_bytes_atomic
from linkage_lab.kinematics.rsu_ankle import LoopConstants, evaluate_core, loop_constants
from linkage_lab.kinematics.rsu_fk import forward_kinematics_unrolled
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry
from linkage_lab.robots.ankles import load_ankle_geometry

#: Newton steps unrolled in the FK graph. Measured in float64 on a 41 × 21 grid over the range
#: (every preset): 5 steps leave up to 1.1e-9 rad from neutral (rods_close; 1.2e-12 for marvin); 6
#: reach machine precision from neutral and from every warm start one 20 ms tick away at the
#: motors' no-load speed. The float32 ONNX graph (float64 inside) is then off by ≤ 3e-8 rad
#: (marvin, both sides), the float32 rounding of its output.
FK_NEWTON_STEPS = 6
#: Newton steps are clipped to this per axis (rad), so a poor warm start cannot jump far.
FK_MAX_STEP_RAD = 0.5
OPSET = 17
#: The graphs take and return float32 and compute in float64 inside (ONNX Cast nodes).
DTYPE = torch.float64
SIDES = ("left", "right")
FUNCTIONS = ("ik", "fk", "velocity", "gains", "torque")
#: The motor-gain mode the export uses (docs/design/ankle_linkage.md §8), written into every file's metadata.
EXPORT_GAIN_MODE = "host_torque"

BRIDGE_DOC = f"""\
Ankle bridge (docs/design/ankle_linkage.md §8): ONNX graphs `ankle_<side>_<function>.onnx`, side in
{{left, right}} (the right ankle is the left mirrored in y), opset {OPSET}, float32 inputs and
outputs (float64 inside), batch dimension `batch` dynamic (any B ≥ 1).

Conventions: pose = (pitch, roll) rad, + pitch = toes up, + roll = right-hand about +x;
crank angles = (motor a, motor b) in rad *from neutral* (θ − π), both in
the linkage sign convention (right-hand about −y, tip at M + r(cos θ, 0, sin θ)); the real
motors face opposite ways, so the robot's per-motor sign table converts to each motor's own
sign. J = ∂crank/∂pose, rows motors (a, b), columns (pitch, roll).

- ik: `joint_pos_target` [B,2] → `crank_pos_target` [B,2], `reachable` [B,2] bool.
  Closed form (§2) on the assembled branch. Where a rod cannot reach, `reachable` is false and
  the crank angle is that of the fully stretched rod (never NaN): the caller must check it.
- fk: `crank_pos` [B,2], `joint_pos_guess` [B,2] (warm start: the previous tick's pose, or
  zeros) → `joint_pos` [B,2], `last_step_rad` [B]. {FK_NEWTON_STEPS} unrolled Newton steps on the
  rod-length equations (float64 inside), each clipped to ±{FK_MAX_STEP_RAD} rad. Measured error
  ≤ 3e-8 rad (float32 output rounding) over the range, from neutral and from a warm start one
  20 ms tick away at the motors' no-load speed. `last_step_rad` (max |step| of the last
  iteration) above ~1e-6 flags a failure: no convergence, or a guess far off.
- velocity: `crank_vel` [B,2] (rad/s), `joint_pos` [B,2] → `joint_vel` [B,2] = J⁻¹ crank_vel.
- gains: `joint_pos` [B,2], `joint_kp` [B,2] (N·m/rad), `joint_kd` [B,2] (N·m·s/rad) →
  `motor_kp` [B,2,2] = J⁻ᵀ diag(kp) J⁻¹, `motor_kd` [B,2,2] = J⁻ᵀ diag(kd) J⁻¹: the coupled
  motor-space gains. A per-motor driver cannot take the off-diagonal terms: never copy joint
  kp/kd to the motors.
- torque: `joint_pos` [B,2], `joint_torque` [B,2] (N·m) → `motor_torque` [B,2] = J⁻ᵀ τ_j.
  Mode `{EXPORT_GAIN_MODE}` is the one this export uses (metadata `linkage_lab.gain_mode`): the
  host runs the joint-space PD τ_j = K_j (q* − q) + D_j (q̇* − q̇), as Marvin's simulated ankle
  actuator does (`control_space="joint"`), and sends motor torques with kp = kd = 0. The gains
  graph serves drivers that take a full 2 × 2 motor-space PD.
"""


def _bridge_constants(geometry: RSUAnkleGeometry) -> LoopConstants:
    """The library's loop-closure constants in the graphs' compute dtype (traced as graph constants)."""
    return loop_constants(geometry, DTYPE, "cpu")


def _ik(
    c: LoopConstants, joint_pos: torch.Tensor, with_jacobian: bool = True, atan_float32: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Crank angles from neutral ``[B, 2]``, reachability ``[B, 2]`` and ``J`` ``[B, 2, 2]`` (or ``None``).

    The library's exportable core (:func:`~linkage_lab.kinematics.rsu_ankle.evaluate_core`), with
    the stretched-rod angle where a rod cannot reach (never NaN). ``atan_float32`` evaluates the
    final atan2 in float32: ONNX Runtime has no float64 Atan.
    """
    angle_dtype = torch.float32 if atan_float32 else None
    state = evaluate_core(c, joint_pos, with_jacobian, stretch_unreachable=True, angle_dtype=angle_dtype)
    return state.motor_pos, state.reachable, state.jacobian


def _jacobian(c: LoopConstants, joint_pos: torch.Tensor) -> torch.Tensor:
    """``J = ∂crank/∂pose`` ``[B, 2, 2]`` from the library's core."""
    return cast(torch.Tensor, _ik(c, joint_pos, with_jacobian=True)[2])


def _inverse_2x2(matrix: torch.Tensor) -> torch.Tensor:
    """Batched 2 × 2 inverse by the adjugate (exports as a handful of elementwise ops)."""
    a, b, c, d = matrix[:, 0, 0], matrix[:, 0, 1], matrix[:, 1, 0], matrix[:, 1, 1]
    det = a * d - b * c
    rows = [torch.stack([d, -b], dim=-1), torch.stack([-c, a], dim=-1)]
    return torch.stack(rows, dim=-2) / det[:, None, None]


def _fk(
    c: LoopConstants, crank_pos: torch.Tensor, guess: torch.Tensor, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pose ``[B, 2]`` and last ``|step|`` ``[B]`` from crank angles: the library's unrolled Newton.

    :func:`~linkage_lab.kinematics.rsu_fk.forward_kinematics_unrolled`, each step clipped to
    ±:data:`FK_MAX_STEP_RAD` per axis.
    """
    return forward_kinematics_unrolled(c, crank_pos, guess, steps, FK_MAX_STEP_RAD)


class _AnkleFunction(torch.nn.Module):
    """Base of the exported graphs: the ankle's constants and the names of its inputs and outputs.

    The graphs trace the library's exportable core (:func:`~linkage_lab.kinematics.rsu_ankle.evaluate_core`,
    :func:`~linkage_lab.kinematics.rsu_fk.forward_kinematics_unrolled`: no host synchronisation,
    no data-dependent branches; atan2, sqrt, sin/cos) plus 2 × 2 algebra by the adjugate, exported
    with the TorchScript exporter; this module holds no copy of the ankle's math.

    ``forward`` takes and returns float32 (bool for flags) and computes in float64: in float32
    the rod-length residual loses ~1e-6 rad to cancellation, in float64 only the interface rounds.
    """

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def __init__(self, geometry: RSUAnkleGeometry):
        super().__init__()
        self.geometry = geometry
        self.consts = _bridge_constants(geometry)

    def forward(self, *args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outputs = self.compute(*(arg.to(DTYPE) for arg in args))
        return tuple(out if out.dtype == torch.bool else out.to(torch.float32) for out in outputs)

    def compute(self, *args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The function in float64; subclasses implement it."""
        raise NotImplementedError


class AnkleIK(_AnkleFunction):
    """``joint_pos_target [B,2]`` → ``crank_pos_target [B,2]``, ``reachable [B,2]`` (closed form, §2)."""

    inputs, outputs = ("joint_pos_target",), ("crank_pos_target", "reachable")

    def compute(self, joint_pos_target: torch.Tensor) -> tuple[torch.Tensor, ...]:
        crank_pos, reachable, _ = _ik(self.consts, joint_pos_target, with_jacobian=False, atan_float32=True)
        return crank_pos, reachable


class AnkleFK(_AnkleFunction):
    """``crank_pos``, ``joint_pos_guess`` ``[B,2]`` → ``joint_pos [B,2]``, ``last_step_rad [B]`` (§3)."""

    inputs, outputs = ("crank_pos", "joint_pos_guess"), ("joint_pos", "last_step_rad")

    def __init__(self, geometry: RSUAnkleGeometry, steps: int = FK_NEWTON_STEPS):
        super().__init__(geometry)
        self.steps = steps

    def compute(self, crank_pos: torch.Tensor, joint_pos_guess: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return _fk(self.consts, crank_pos, joint_pos_guess, self.steps)


class AnkleVelocity(_AnkleFunction):
    """``crank_vel``, ``joint_pos`` ``[B,2]`` → ``joint_vel = J⁻¹ crank_vel`` ``[B,2]`` (rad/s)."""

    inputs, outputs = ("crank_vel", "joint_pos"), ("joint_vel",)

    def compute(self, crank_vel: torch.Tensor, joint_pos: torch.Tensor) -> tuple[torch.Tensor, ...]:
        inverse = _inverse_2x2(_jacobian(self.consts, joint_pos))
        return ((inverse @ crank_vel.unsqueeze(-1)).squeeze(-1),)


class AnkleGains(_AnkleFunction):
    """``joint_pos``, ``joint_kp``, ``joint_kd`` ``[B,2]`` → ``motor_kp``, ``motor_kd`` ``[B,2,2]``.

    ``K_m = J⁻ᵀ K_j J⁻¹``: the motor-space stiffness whose torque for a small motor error
    ``δθ = J δq`` is ``J⁻ᵀ K_j δq``, the joint stiffness's torque seen through the linkage.
    """

    inputs, outputs = ("joint_pos", "joint_kp", "joint_kd"), ("motor_kp", "motor_kd")

    def compute(
        self, joint_pos: torch.Tensor, joint_kp: torch.Tensor, joint_kd: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        inverse = _inverse_2x2(_jacobian(self.consts, joint_pos))
        inverse_t = inverse.transpose(-1, -2)
        return inverse_t @ (joint_kp.unsqueeze(-1) * inverse), inverse_t @ (joint_kd.unsqueeze(-1) * inverse)


class AnkleTorque(_AnkleFunction):
    """``joint_pos``, ``joint_torque`` ``[B,2]`` → ``motor_torque = J⁻ᵀ τ_j`` ``[B,2]`` (N·m)."""

    inputs, outputs = ("joint_pos", "joint_torque"), ("motor_torque",)

    def compute(self, joint_pos: torch.Tensor, joint_torque: torch.Tensor) -> tuple[torch.Tensor, ...]:
        inverse_t = _inverse_2x2(_jacobian(self.consts, joint_pos)).transpose(-1, -2)
        return ((inverse_t @ joint_torque.unsqueeze(-1)).squeeze(-1),)


GRAPHS: dict[str, type[_AnkleFunction]] = {
    "ik": AnkleIK,
    "fk": AnkleFK,
    "velocity": AnkleVelocity,
    "gains": AnkleGains,
    "torque": AnkleTorque,
}


def bridge_filename(side: str, function: str) -> str:
    """File name of one graph, ``ankle_<side>_<function>.onnx``."""
    return f"ankle_{side}_{function}.onnx"


def export_graph(module: _AnkleFunction, function: str) -> bytes:
    """Trace one bridge module to ONNX bytes (float32, dynamic batch) with metadata properties."""
    import warnings

    import onnx

    example = tuple(torch.zeros(2, 2) for _ in module.inputs)
    dynamic = {name: {0: "batch"} for name in (*module.inputs, *module.outputs)}
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # The legacy TorchScript exporter is deprecated but traces these plain ops exactly.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module.eval(),
            example,
            buffer,
            input_names=list(module.inputs),
            output_names=list(module.outputs),
            dynamic_axes=dynamic,
            opset_version=OPSET,
            dynamo=False,
        )
    model = onnx.load_from_string(buffer.getvalue())
    geometry = module.geometry
    properties = {
        "linkage_lab.function": function,
        "linkage_lab.side": geometry.side,
        "linkage_lab.preset": geometry.preset,
        "linkage_lab.motor": geometry.motor.name,
        "linkage_lab.crank_convention": "rad from neutral (theta - pi), linkage sign, rows motors (a, b)",
        "linkage_lab.pose_convention": "(pitch, roll) rad, +pitch toes up, +roll right-hand about +x",
        "linkage_lab.gain_mode": EXPORT_GAIN_MODE,
        "linkage_lab.fk_newton_steps": str(FK_NEWTON_STEPS),
    }
    onnx.helper.set_model_props(model, properties)
    model.doc_string = (GRAPHS[function].__doc__ or "").strip()
    onnx.checker.check_model(model)
    return model.SerializeToString()


def export_ankle_bridge(out_dir: Path, preset: str | None = None, robot: str | None = None) -> list[Path]:
    """Write the ankle bridge graphs of both sides, ``ankle_<side>_<function>.onnx``, to ``out_dir``.

    Args:
        out_dir: Output folder (created if missing).
        preset: Ankle geometry preset of the robot's config (docs/design/ankle_linkage.md §7); ``None``: its own.
        robot: The robot; ``None``: the one registered robot with RSU ankles.

    Returns:
        The written files, left side first, in the order of :data:`FUNCTIONS`. :data:`BRIDGE_DOC`
        describes every input and output.
    """
    out_dir = Path(out_dir)
    paths = []
    for side in SIDES:
        geometry = load_ankle_geometry(preset, side=side, robot=robot)
        for function in FUNCTIONS:
            data = export_graph(GRAPHS[function](geometry), function)
            paths.append(write_bytes_atomic(out_dir / bridge_filename(side, function), data))
    return paths

"""Marvin's ankle conversion layer (ankle_linkage.md §8) as ONNX graphs: no Python needed on the robot."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import torch

from linkage_lab.io import write_bytes_atomic
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry, load_ankle_geometry

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
#: The motor-gain mode the export uses (ankle_linkage.md §8), written into every file's metadata.
EXPORT_GAIN_MODE = "host_torque"

BRIDGE_DOC = f"""\
Ankle bridge (ankle_linkage.md §8): ONNX graphs `ankle_<side>_<function>.onnx`, side in
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


def _bridge_constants(geometry: RSUAnkleGeometry) -> dict[str, torch.Tensor | float]:
    """Per-motor constants (float64 tensors ``[2]``), in the crank plane rotated by −θ0 so that
    crank angles count from neutral."""
    theta0 = geometry.neutral_crank_angle_rad
    radius = geometry.crank_radius_m
    foot = np.asarray(geometry.rod_end_foot_m, dtype=np.float64)
    centre = np.asarray(geometry.motor_centre_m, dtype=np.float64)
    tips = centre + radius * np.array([math.cos(theta0), 0.0, math.sin(theta0)])
    # Rotating the xz plane by −θ0: x' = cos θ0 x + sin θ0 z, z' = −sin θ0 x + cos θ0 z.
    values = {
        "foot_x": foot[:, 0],
        "foot_y": foot[:, 1],
        "foot_z": foot[:, 2],
        "centre_x": math.cos(theta0) * centre[:, 0] + math.sin(theta0) * centre[:, 2],
        "centre_y": centre[:, 1],
        "centre_z": -math.sin(theta0) * centre[:, 0] + math.cos(theta0) * centre[:, 2],
        "length_sq": ((tips - foot) ** 2).sum(-1),
    }
    consts: dict[str, torch.Tensor | float] = {k: torch.tensor(v, dtype=DTYPE) for k, v in values.items()}
    consts |= {"radius": radius, "theta0": theta0}
    # The assembled branch is the one through zero crank angle at neutral.
    neutral = torch.zeros(1, 2, dtype=DTYPE)
    angles = [_ik(consts | {"branch": torch.full((2,), s, dtype=DTYPE)}, neutral)[0].abs()[0] for s in (1, -1)]
    consts["branch"] = torch.where(angles[0] < angles[1], 1.0, -1.0).to(DTYPE)
    return consts


def _foot_points(c: dict, joint_pos: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Rod ends on the foot, ``A = R_y(−q_p) R_x(q_r) A0``, x/z rotated by −θ0; ``[B, 2]`` per motor.

    Returns ``(a_x, a_y, a_z, v_z, cos_s, sin_s)`` with ``v = R_x(q_r) A0`` (so ``a_y = v_y``)
    and ``s = q_p − θ0``.
    """
    pitch, roll = joint_pos[:, 0:1], joint_pos[:, 1:2]
    shifted = pitch - c["theta0"]
    cos_s, sin_s, cos_r, sin_r = torch.cos(shifted), torch.sin(shifted), torch.cos(roll), torch.sin(roll)
    v_y = cos_r * c["foot_y"] - sin_r * c["foot_z"]
    v_z = sin_r * c["foot_y"] + cos_r * c["foot_z"]
    a_x = cos_s * c["foot_x"] - sin_s * v_z
    a_z = sin_s * c["foot_x"] + cos_s * v_z
    return a_x, v_y, a_z, v_z, cos_s, sin_s


def _ik(
    c: dict, joint_pos: torch.Tensor, atan_float32: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Crank angles from neutral ``[B, 2]``, reachability ``[B, 2]`` and the Jacobian ``[B, 2, 2]``.

    With ``d = A − M`` (x, z in the rotated plane), the rod length gives ``d_x cos φ + d_z sin φ = κ``,
    ``κ = (‖d‖² + r² − L²) / 2r`` (§2 divided by −2r), so with ``S = √(h² − κ²)``, ``h² = d_x² + d_z²``:
    ``(cos φ, sin φ) = (d_x κ − s d_z S, d_z κ + s d_x S) / h²``. The Jacobian follows from the
    implicit function theorem on ``‖d − r u(φ)‖² = L²``: ``J_ij = (e · ∂A/∂q_j) / (r e · u′(φ))``,
    ``e = d − r u(φ)``, with ``∂A/∂q_p = (−A_z, 0, A_x)`` and ``∂A/∂q_r = (−sin_s v_y, −v_z, cos_s v_y)``.
    ``atan_float32`` evaluates the final atan2 in float32 (ONNX Runtime has no float64 Atan); its
    arguments are exact to float32 rounding, so the angle is too.
    """
    radius = c["radius"]
    a_x, a_y, a_z, v_z, cos_s, sin_s = _foot_points(c, joint_pos)
    d_x, d_y, d_z = a_x - c["centre_x"], a_y - c["centre_y"], a_z - c["centre_z"]
    h_sq = d_x * d_x + d_z * d_z
    kappa = (h_sq + d_y * d_y + radius**2 - c["length_sq"]) / (2.0 * radius)
    perp_sq = h_sq - kappa * kappa
    reachable = perp_sq >= 0.0
    # A rod that cannot reach gets the stretched-rod angle (S = 0) instead of a NaN.
    perp = torch.sqrt(torch.clamp(perp_sq, min=0.0)) * c["branch"]
    cos_c = (d_x * kappa - d_z * perp) / h_sq
    sin_c = (d_z * kappa + d_x * perp) / h_sq
    if atan_float32:
        crank_pos = torch.atan2(sin_c.float(), cos_c.float()).to(joint_pos.dtype)
    else:
        crank_pos = torch.atan2(sin_c, cos_c)
    e_x, e_z = d_x - radius * cos_c, d_z - radius * sin_c
    denominator = radius * (e_z * cos_c - e_x * sin_c)
    jac_pitch = (e_z * a_x - e_x * a_z) / denominator
    jac_roll = (a_y * (e_z * cos_s - e_x * sin_s) - d_y * v_z) / denominator
    return crank_pos, reachable, torch.stack([jac_pitch, jac_roll], dim=-1)


def _inverse_2x2(matrix: torch.Tensor) -> torch.Tensor:
    """Batched 2 × 2 inverse by the adjugate (exports as a handful of elementwise ops)."""
    a, b, c, d = matrix[:, 0, 0], matrix[:, 0, 1], matrix[:, 1, 0], matrix[:, 1, 1]
    det = a * d - b * c
    rows = [torch.stack([d, -b], dim=-1), torch.stack([-c, a], dim=-1)]
    return torch.stack(rows, dim=-2) / det[:, None, None]


def _fk(c: dict, crank_pos: torch.Tensor, guess: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pose from crank angles: ``steps`` Newton steps on ``r_i(q) = ½(‖A_i(q) − C_i‖² − L_i²) = 0``.

    The crank tips ``C`` are fixed by the measured angles; ``G = ∂r/∂q = (A − C) · ∂A/∂q`` (the
    derivatives of :func:`_ik`). Each step is clipped to ±:data:`FK_MAX_STEP_RAD` per axis.
    """
    radius = c["radius"]
    tip_x = c["centre_x"] + radius * torch.cos(crank_pos)
    tip_z = c["centre_z"] + radius * torch.sin(crank_pos)
    joint_pos, step = guess, torch.zeros_like(guess)
    for _ in range(steps):
        a_x, a_y, a_z, v_z, cos_s, sin_s = _foot_points(c, joint_pos)
        e_x, e_y, e_z = a_x - tip_x, a_y - c["centre_y"], a_z - tip_z
        residual = 0.5 * (e_x * e_x + e_y * e_y + e_z * e_z - c["length_sq"])
        grad_pitch = e_z * a_x - e_x * a_z
        grad_roll = a_y * (e_z * cos_s - e_x * sin_s) - e_y * v_z
        gradient = torch.stack([grad_pitch, grad_roll], dim=-1)
        step = (_inverse_2x2(gradient) @ residual.unsqueeze(-1)).squeeze(-1)
        step = torch.clamp(step, -FK_MAX_STEP_RAD, FK_MAX_STEP_RAD)
        joint_pos = joint_pos - step
    return joint_pos, step.abs().amax(dim=-1)


class _AnkleFunction(torch.nn.Module):
    """Base of the exported graphs: the ankle's constants and the names of its inputs and outputs.

    The graphs restate the closed form of :mod:`linkage_lab.kinematics.rsu_ankle` in plain,
    trace-friendly torch ops (no in-place updates, no data-dependent branches; atan2, sqrt,
    sin/cos, 2 × 2 algebra by the adjugate), exported with the TorchScript exporter; the tests
    hold them to the library's IK, J and FK.

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
        crank_pos, reachable, _ = _ik(self.consts, joint_pos_target, atan_float32=True)
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
        inverse = _inverse_2x2(_ik(self.consts, joint_pos)[2])
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
        inverse = _inverse_2x2(_ik(self.consts, joint_pos)[2])
        inverse_t = inverse.transpose(-1, -2)
        return inverse_t @ (joint_kp.unsqueeze(-1) * inverse), inverse_t @ (joint_kd.unsqueeze(-1) * inverse)


class AnkleTorque(_AnkleFunction):
    """``joint_pos``, ``joint_torque`` ``[B,2]`` → ``motor_torque = J⁻ᵀ τ_j`` ``[B,2]`` (N·m)."""

    inputs, outputs = ("joint_pos", "joint_torque"), ("motor_torque",)

    def compute(self, joint_pos: torch.Tensor, joint_torque: torch.Tensor) -> tuple[torch.Tensor, ...]:
        inverse_t = _inverse_2x2(_ik(self.consts, joint_pos)[2]).transpose(-1, -2)
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


def export_ankle_bridge(out_dir: Path, preset: str = "marvin") -> list[Path]:
    """Write the ankle bridge graphs of both sides, ``ankle_<side>_<function>.onnx``, to ``out_dir``.

    Args:
        out_dir: Output folder (created if missing).
        preset: Ankle geometry preset of ``configs/robots/marvin.yaml`` (ankle_linkage.md §7).

    Returns:
        The written files, left side first, in the order of :data:`FUNCTIONS`. :data:`BRIDGE_DOC`
        describes every input and output.
    """
    out_dir = Path(out_dir)
    paths = []
    for side in SIDES:
        geometry = load_ankle_geometry(preset, side=side)
        for function in FUNCTIONS:
            data = export_graph(GRAPHS[function](geometry), function)
            paths.append(write_bytes_atomic(out_dir / bridge_filename(side, function), data))
    return paths

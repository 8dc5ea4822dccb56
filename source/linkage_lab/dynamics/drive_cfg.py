"""Configuration of the linkage drive (:class:`~linkage_lab.dynamics.drive.LinkageDrive`): gains, motor limits,
the S3N model and how its explicit torque is estimated and bounded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.kinematics.motor_limits import SaturationMode

ExplicitSplit = Literal["paper", "diagonal"]
MotorCoupling = Literal["full", "held", "diagonal"]


@dataclass(frozen=True)
class LinkageDriveCfg:
    """Configuration of :class:`LinkageDrive`. Per-joint and per-motor tuples have ``n`` entries."""

    s3n: S3NCfg = field(default_factory=S3NCfg)
    """Dynamics model (``kin_only`` / ``s3n_act`` / ``s3n_full``) and its parameters."""

    control_space: Literal["joint", "motor"] = "joint"
    """``joint``: ``τ_j = K_p(q* − q) + K_d(q̇* − q̇)``, then ``τ_m = J⁻ᵀ τ_j``. ``motor``: PD on the motor
    coordinates ``θ = f(q)`` (what the real motor drivers do)."""

    joint_kp: tuple[float, ...] = (20.0, 20.0)
    """Joint-space stiffness ``K_j`` (N·m/rad); used in joint space, and in motor space when
    ``motor_kp`` is ``None`` (mapped ``K_m = J⁻ᵀ K_j J⁻¹`` at the current pose)."""

    joint_kd: tuple[float, ...] = (0.5, 0.5)
    """Joint-space damping gain (N·m·s/rad); mapped like ``joint_kp``."""

    motor_kp: tuple[float, ...] | None = None
    """Per-motor stiffness (N·m/rad) for ``control_space="motor"``; ``None``: map ``joint_kp``."""

    motor_kd: tuple[float, ...] | None = None
    """Per-motor damping gain (N·m·s/rad) for ``control_space="motor"``; ``None``: map ``joint_kd``."""

    motor_coupling: MotorCoupling = "full"
    """How motor-space PD with mapped gains applies ``K_m``'s (and ``D_m``'s) cross terms, the hip-knee coupling a
    linkage puts into the joint gains. ``full``: the whole matrix on every physics step's error, as a joint-space PD
    on the host would. The robot's drivers each run a PD on their own motor, so a wire can give them only:
    ``held``: each motor's own gain ``K_m,ii`` on its error every step and the cross terms folded into its target from
    the motor state sampled when the target last changed (a control tick, or the first step after a reset), held until
    the next (the deploy wire's ``leg_gains="coupled"``); ``diagonal``: each motor's own gain alone, no cross terms
    (``leg_gains="diagonal"``: joint stiffness ``Jᵀ diag(K_m) J`` instead of ``K_j``)."""

    motor_peak_torque_nm: tuple[float, ...] = (10.0, 10.0)
    """Peak torque per motor (N·m)."""

    saturation_mode: SaturationMode = "clip"
    """``clip`` each motor on its own, or ``scale`` the motor-torque vector (keeps its direction)."""

    motor_no_load_speed_rads: tuple[float, ...] | None = None
    """No-load speed per motor (rad/s) for a DC torque–speed line, as Isaac Lab's DC motor:
    ``τ ≤ T(1 − ω/ω₀)`` and ``τ ≥ −T(1 + ω/ω₀)``, each side clamped to ``[0, T]`` in magnitude, so the
    available torque falls linearly from ``T`` at rest to 0 at ``ω₀`` when the motor drives, and stays
    ``T`` when it brakes. ``None``: speed-independent limit."""

    motor_stall_torque_nm: tuple[float, ...] | None = None
    """Stall torque per motor (N·m), where the torque–speed line starts (``T_s`` in ``T_s(1 − ω/ω₀)``, then
    clamped to the peak torque ``T``): a motor whose driver caps it below its stall torque keeps that cap up to
    ``ω₀(1 − T/T_s)``. ``None``: the line starts at the peak torque."""

    command_delay_steps: int = 0
    """Physics steps between a command and its use (the paper's ``T_d`` = one step)."""

    accel_filter_time_constant_s: float | None = None
    """First-order low-pass on the finite-difference ``q̈`` fed to the explicit S3N torque (s);
    ``None``: unfiltered, as the paper. A stabiliser for very large explicit inertia (see
    :meth:`LinkageDrive.explicit_loop_gain`); it adds phase lag near ``1/τ``."""

    acceleration_estimate: Literal["previous", "torque_predicted"] = "previous"
    """The ``q̈`` the explicit S3N torque multiplies. ``previous``: the finite difference over the
    previous step (optionally low-passed), as the paper; it lags the truth by one step, an error
    that grows linearly with ``dt``. ``torque_predicted``: that plus ``M_norm(q)⁻¹ (τ_act,k − τ_act,k−1)``,
    the jump in acceleration this step's own actuator torque change makes (the drive knows it).
    Exact when the other forces (gravity, Coriolis, contacts) do not change over the step; the loop
    gain, hence stability, is that of ``previous``. Needs ``s3n.serial_link_kgm2`` and two joints."""

    explicit_acceleration_limit: Literal["none", "actuator"] = "none"
    """Bound on the ``q̈`` the explicit S3N torque multiplies. ``actuator``: per joint, the largest acceleration
    the leg's own motors can give it at the reference pose, ``|q̈_j| ≤ (|J|ᵀ τ_peak)_j / M_jj``, with ``M`` the
    serial links' inertia plus the native armature. A finite-difference ``q̈`` above that comes from a contact
    impulse (a touchdown): the contact has already applied it, and multiplied one step late it made explicit
    torques above the motors' peak. ``none``: unbounded, as the paper. ``actuator`` needs
    ``s3n.serial_link_kgm2`` and two joints."""

    explicit_split: ExplicitSplit = "diagonal"
    """Which share of the model's inertia increment the simulator integrates natively as armature.
    ``paper``: the actuator part's diagonal only (docs/design/s3n.md §3; all of ``ΔM_link`` explicit).
    ``diagonal``: the whole increment's diagonal at the reference pose (so ``diag ΔM_link`` too);
    the same total inertia, a smaller explicit loop, hence more stable. Identical for ``s3n_act``."""

    reference_joint_pos_rad: tuple[float, ...] | None = None
    """Pose (rad) at which pose-dependent diagonals are split off as native armature/damping;
    ``None``: all zeros."""

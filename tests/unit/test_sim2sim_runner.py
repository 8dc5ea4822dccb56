"""Sim-to-sim on the closed-chain models: scripted rollouts, the robot-side conversions, and bad input.

The bundles here are made by hand from each robot's config (no Isaac Lab): a zero-action ``policy.onnx``,
``metadata.json`` in the export's layout, and the robot-side files the export writes (the Limit's
``deploy.json``, Marvin's ankle bridge).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import mujoco
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from linkage_lab.arguments import parse_command
from linkage_lab.cli.main import main
from linkage_lab.kinematics.rsu_ankle import ik_and_jacobian
from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.bundle import BundleError, load_bundle
from linkage_lab.sim2sim.drive import MotorCommand, driver_clamp, motor_pd_torque
from linkage_lab.sim2sim.metrics import FallRule
from linkage_lab.sim2sim.runner import run_sim2sim
from linkage_lab.sim2sim.sensors import SensorReader

pytestmark = pytest.mark.unit

TERMS = (
    ("base_lin_vel", "base_lin_vel", 3),
    ("base_ang_vel", "base_ang_vel", 3),
    ("projected_gravity", "projected_gravity", 3),
    ("velocity_commands", "generated_commands", 3),
    ("joint_pos", "joint_pos_rel", None),
    ("joint_vel", "joint_vel_rel", None),
    ("actions", "last_action", None),
)


def _zero_policy(path, obs_size: int, action_size: int) -> None:
    """``actions = obs · 0``: the default pose, whatever the observation."""
    weight = helper.make_tensor("w", TensorProto.FLOAT, [obs_size, action_size], [0.0] * (obs_size * action_size))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["actions"])],
        "zero",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, obs_size])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, action_size])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _metadata(robot: str, kp: list[float], kd: list[float]) -> dict:
    spec = get_robot(robot)
    chain = spec.closed_chain()
    names = list(spec.joint_names)
    default = [chain.default_joint_pos.get(n, 0.0) for n in names]
    layout = [
        {"name": name, "size": size or len(names), "scale": 1.0, "clip": None, "function": f"isaaclab.mdp.{function}"}
        for name, function, size in TERMS
    ]
    return {
        "robot": robot,
        "task": f"hand-made {robot} bundle",
        "control_period_s": 0.02,
        "joint_names": names,
        "default_joint_pos": default,
        "action_scale": [0.25] * len(names),
        "action_offset": default,
        "action_clip": 12.0,
        "action_target_clip": None,
        "kp": kp,
        "kd": kd,
        "observation_layout": layout,
        "observation_size": sum(term["size"] for term in layout),
    }


def _write_bundle(folder, metadata: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps(metadata))
    _zero_policy(folder / "policy.onnx", metadata["observation_size"], len(metadata["joint_names"]))


@pytest.fixture(scope="module")
def limit_bundle(tmp_path_factory):
    from linkage_lab.robots.limit.deploy import write_deploy_config

    control = get_robot("limit").config().control
    folder = tmp_path_factory.mktemp("bundles") / "limit"
    metadata = _metadata("limit", [control.stiffness_nm_per_rad] * 12, [control.damping_nms_per_rad] * 12)
    _write_bundle(folder, metadata)
    write_deploy_config(folder, metadata)
    return folder


@pytest.fixture(scope="module")
def marvin_bundle(tmp_path_factory):
    from linkage_lab.deploy.ankle_bridge import export_ankle_bridge

    spec = get_robot("marvin")
    control = spec.config().control

    def group(name: str) -> str:
        """The config's gain group of a joint: arm, ankle, knee, else hip."""
        kind = name.split("_", 1)[1]
        if kind in ("shoulder_pitch", "elbow"):
            return "arm"
        return next((g for g in ("ankle", "knee") if g in kind), "hip")

    kp = [control.stiffness[group(n)] for n in spec.joint_names]
    kd = [control.damping[group(n)] for n in spec.joint_names]
    folder = tmp_path_factory.mktemp("bundles") / "marvin"
    _write_bundle(folder, {**_metadata("marvin", kp, kd), "ankle_gain_mode": "host_torque"})
    export_ankle_bridge(folder / "ankle_bridge", robot="marvin")
    return folder


# --- rollouts ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("robot", ["limit", "marvin"])
def test_scripted_rollout_stays_upright(robot, limit_bundle, marvin_bundle):
    """2 s of the robot's scripted gait through the bundle's robot side on the closed chain: no fall and
    finite numbers. The Limit trots at 0.3 m/s; Marvin runs its sprint gait (the tuned one; its velocity
    gait is the NAO lesson scaled, untuned) refereed as the sprint."""
    if robot == "limit":
        report = run_sim2sim(limit_bundle, (0.3, 0.0), 2.0, policy="scripted")
        assert report["tracking"]["mean_forward_speed_mps"] > 0.0  # 0.5 s crouch, then a 1 s step ramp
    else:
        report = run_sim2sim(marvin_bundle, None, 2.0, sprint=True, policy="scripted")
        assert not report["sprint"]["fell"] and report["sprint"]["distance_m"] > 0.0
    assert report["falls"] == 0 and report["ended_reason"] == "duration"
    assert report["control_steps"] == 100
    assert report["simulated_s"] == pytest.approx(2.0)
    assert report["motor_torques"]["samples"] == 1000  # every 2 ms physics step
    motors = report["motor_torques"]["motors"]
    assert len(motors) == {"limit": 12, "marvin": 16}[robot]  # one row per motor: the loop below checks each
    for motor in motors:
        assert math.isfinite(motor["rms_nm"]) and motor["peak_nm"] <= motor["limit_nm"] + 1e-9
    assert math.isfinite(report["tracking"]["lin_vel_xy_rms_mps"])


def test_zero_action_policy_stands(limit_bundle):
    """The bundle path (ONNX at the control rate): a zero action holds the default pose without a fall."""
    report = run_sim2sim(limit_bundle, (0.0, 0.0), 1.0)
    assert report["falls"] == 0
    assert abs(report["tracking"]["mean_forward_speed_mps"]) < 0.05
    # Standing keeps every joint off its stops (the ankle 0.10 rad from its 0.60 rad stop), once per control step.
    stops = report["joint_stops"]
    assert stops["samples"] == 50 and stops["flagged"] == []
    assert [row["name"] for row in stops["joints"]] == list(get_robot("limit").joint_names)
    assert all(row["share_on_stop"] == 0.0 for row in stops["joints"])


def test_joint_stop_ranges_are_the_configs():
    """The closed chain's joint ranges, as the joint-stop share reads them, are the config's (one-sided knee)."""
    from linkage_lab.robots.limit.closed_chain import limit_closed_chain
    from linkage_lab.sim2sim.runner import _joint_ranges

    chain = limit_closed_chain()
    lower, upper = _joint_ranges(chain.compile(), chain.joint_names)
    limits = get_robot("limit").config().joint_limits
    for name, low, high in zip(chain.joint_names, lower.tolist(), upper.tolist(), strict=True):
        assert (low, high) == pytest.approx(limits[name.split("_", 1)[1]].range_rad)


# --- the robot-side conversions ---------------------------------------------------------------------------------


def _at_rest(chain, pose=None):
    model = chain.compile()
    data = mujoco.MjData(model)
    chain.reset(data, pose)
    mujoco.mj_step1(model, data)
    return data, SensorReader(chain, model).read(data)


def test_limit_motor_targets_are_j_times_joint_targets(limit_bundle):
    """The Limit's JointTargets become motor targets θ* = J q* with J = [[1, 0], [1, 1]] (docs/design/robots.md §1.3):
    hip motor = q_hip, knee motor = q_hip + q_knee, ankle = q_ankle; motor stiffness J⁻ᵀ K J⁻¹ on the
    diagonal (hip k_h + k_k, knee k_k); the knee id's wire record carries the knee motor's angle."""
    bundle = load_bundle(limit_bundle)
    chain = get_robot("limit").closed_chain()
    io = get_robot("limit").extra("sim2sim_io")(bundle, chain)
    rng = np.random.default_rng(0)
    pose = {name: value + rng.uniform(-0.1, 0.1) for name, value in chain.default_joint_pos.items()}
    q_star = np.array([pose[name] for name in chain.joint_names])
    # At rest in the target pose the coupling fold-in (from the sample's error) is zero.
    _, sensors = _at_rest(chain, pose)
    command = io.target_command(sensors, q_star)
    motors = list(chain.motor_names)
    k = bundle.metadata["kp"][0]
    for leg in ("fl", "fr", "rl", "rr"):
        hip, knee, ankle = (pose[f"{leg}_{j}"] for j in ("hip", "knee", "ankle"))
        for motor, expected in ((leg + "_hip", hip), (leg + "_knee_motor", hip + knee), (leg + "_ankle", ankle)):
            assert command.position_rad[motors.index(motor)] == pytest.approx(expected, abs=1e-9)
        assert command.kp[motors.index(leg + "_hip")] == pytest.approx(2 * k)
        assert command.kp[motors.index(leg + "_knee_motor")] == pytest.approx(k)
    samples = {s.joint_id: s for s in io.samples(sensors)}
    assert samples[2].pos_rad == pytest.approx(pose["fl_hip"] + pose["fl_knee"], abs=1e-6)


def test_limit_coupled_drivers_apply_the_full_gain_matrix_the_robots_fold_is_exact_only_at_its_sample(
    limit_bundle, tmp_path
):
    """``drivers=coupled`` gives each leg's motors K_m = J⁻ᵀ diag(k_h, k_k) J⁻¹ = [[k_h + k_k, −k_k], [−k_k, k_k]] on
    the unfolded targets; per-motor drivers with the coupling folded in from a sample (``leg_gains="coupled"``) apply
    the same torque at that sample and another once the motors have moved."""
    folded_bundle = tmp_path / "folded"
    shutil.copytree(limit_bundle, folded_bundle)
    deploy = json.loads((folded_bundle / "deploy.json").read_text())
    (folded_bundle / "deploy.json").write_text(json.dumps({**deploy, "leg_gains": "coupled"}))
    bundle = load_bundle(folded_bundle)
    chain = get_robot("limit").closed_chain()
    factory = get_robot("limit").extra("sim2sim_io")
    per_motor, coupled = factory(bundle, chain), factory(bundle, chain, drivers="coupled")
    sampled = {name: value + 0.05 for name, value in chain.default_joint_pos.items()}
    _, at_sample = _at_rest(chain, sampled)
    q_star = np.array([chain.default_joint_pos[name] for name in chain.joint_names])
    folded, full = per_motor.target_command(at_sample, q_star), coupled.target_command(at_sample, q_star)
    torque = motor_pd_torque(full, at_sample)
    assert motor_pd_torque(folded, at_sample) == pytest.approx(torque, abs=1e-9)
    motors = list(chain.motor_names)
    k_hip, k_knee = (bundle.metadata["kp"][list(chain.joint_names).index(f"fl_{j}")] for j in ("hip", "knee"))
    hip, knee = motors.index("fl_hip"), motors.index("fl_knee_motor")
    expected = np.array([[k_hip + k_knee, -k_knee], [-k_knee, k_knee]])
    assert full.kp[np.ix_([hip, knee], [hip, knee])] == pytest.approx(expected)
    # θ* − θ at the sample: hip −0.05, knee motor (hip + knee) −0.1.
    assert torque[[hip, knee]] == pytest.approx([-0.05 * (k_hip + k_knee) + 0.1 * k_knee, 0.05 * k_knee - 0.1 * k_knee])
    _, moved = _at_rest(chain, {**sampled, "fl_hip": sampled["fl_hip"] + 0.04})
    held, exact = motor_pd_torque(folded, moved)[knee], motor_pd_torque(full, moved)[knee]
    assert exact - held == pytest.approx(0.04 * k_knee, rel=1e-6)  # the knee motor's cross term on the hip's move


def _ankle_geometry(chain, side):
    (group,) = [g for g in chain.linkages if g.joints[0] == f"{side}_ankle_pitch"]
    return group, group.make_transmission().geometry


def test_marvin_crank_targets_equal_library_ik(marvin_bundle):
    """motor_pd mode: the bridge's crank targets equal the library's IK of the pitch/roll targets, and the
    crank gains are J⁻ᵀ diag(k) J⁻¹ with the library's J at the sensed pose (never the joint gains)."""
    bundle = load_bundle(marvin_bundle)
    chain = get_robot("marvin").closed_chain()
    io = get_robot("marvin").extra("sim2sim_io")(bundle, chain, ankle_mode="motor_pd")
    _, sensors = _at_rest(chain)
    q_star = np.asarray(bundle.metadata["default_joint_pos"], dtype=float)
    names = list(chain.joint_names)
    targets = {"left": (0.3, -0.15), "right": (-0.4, 0.2)}
    for side, (pitch, roll) in targets.items():
        q_star[names.index(f"{side}_ankle_pitch")], q_star[names.index(f"{side}_ankle_roll")] = pitch, roll
    command = io.target_command(sensors, q_star)
    motors = list(chain.motor_names)
    kp = np.asarray(bundle.metadata["kp"])
    for side, (pitch, roll) in targets.items():
        group, geometry = _ankle_geometry(chain, side)
        crank, _ = ik_and_jacobian(geometry, torch.tensor([[pitch, roll]], dtype=torch.float64))
        index = [motors.index(m) for m in group.motors]
        assert command.position_rad[index] == pytest.approx(crank.numpy().reshape(-1), abs=2e-6)
        standing = [chain.default_joint_pos.get(j, 0.0) for j in group.joints]
        _, jac = ik_and_jacobian(geometry, torch.tensor([standing], dtype=torch.float64))
        inverse = np.linalg.inv(jac.numpy()[0])
        joint_kp = np.diag([kp[names.index(j)] for j in group.joints])
        assert command.kp[np.ix_(index, index)] == pytest.approx(inverse.T @ joint_kp @ inverse, rel=1e-4)


def test_marvin_host_torque_is_j_inverse_transpose_of_the_joint_pd(marvin_bundle):
    """host_torque mode: cranks get kp = kd = 0 and, every physics step, τ_m = J⁻ᵀ K_j (q* − q) at the pose
    the bridge's FK reads off the crank encoders (at rest, the true pose)."""
    bundle = load_bundle(marvin_bundle)
    chain = get_robot("marvin").closed_chain()
    io = get_robot("marvin").extra("sim2sim_io")(bundle, chain)
    pose = {**chain.default_joint_pos, "left_ankle_pitch": 0.2, "left_ankle_roll": 0.1}
    _, sensors = _at_rest(chain, pose)
    q_star = np.array([pose.get(n, 0.0) for n in chain.joint_names])
    names = list(chain.joint_names)
    q_star[names.index("left_ankle_pitch")] += 0.05
    command = io.target_command(sensors, q_star)
    group, geometry = _ankle_geometry(chain, "left")
    index = [list(chain.motor_names).index(m) for m in group.motors]
    assert not np.any(command.kp[np.ix_(index, index)]) and not np.any(command.kd[np.ix_(index, index)])
    _, jac = ik_and_jacobian(geometry, torch.tensor([[0.2, 0.1]], dtype=torch.float64))
    joint_torque = np.array([bundle.metadata["kp"][names.index("left_ankle_pitch")] * 0.05, 0.0])
    expected = np.linalg.solve(jac.numpy()[0].T, joint_torque)
    assert command.host(sensors)[index] == pytest.approx(expected, rel=1e-3, abs=1e-3)


def test_driver_pd_per_motor_and_coupled(limit_bundle):
    """τ = K_p (θ* − θ) + K_d (θ̇* − θ̇) with per-motor or matrix gains; the clamp is the driver's max torque."""
    chain = get_robot("limit").closed_chain()
    _, sensors = _at_rest(chain)
    n = len(chain.motors)
    error = np.linspace(-0.1, 0.1, n)
    target = sensors.motor_pos_rad + error
    diagonal = MotorCommand(target, sensors.motor_vel_rads, np.full(n, 20.0), np.zeros(n), np.full(n, 1.0))
    assert motor_pd_torque(diagonal, sensors) == pytest.approx(20.0 * error)
    gain = np.eye(n) * 20.0 + np.eye(n, k=1) * -5.0
    coupled = MotorCommand(target, sensors.motor_vel_rads, gain, np.zeros((n, n)), np.full(n, 1.0))
    assert motor_pd_torque(coupled, sensors) == pytest.approx(gain @ error)
    assert np.abs(driver_clamp(diagonal, motor_pd_torque(diagonal, sensors))).max() == pytest.approx(1.0)


def test_fall_rule():
    """Height: the sprint's fraction 0.20 / 0.333 of the standing height; tilt beyond 60°."""
    rule = FallRule.from_standing_height(0.5)
    assert rule.height_m == pytest.approx(0.5 * 0.20 / 0.33309, rel=1e-3)
    level = np.array([0.0, 0.0, -1.0])
    tilted = np.array([math.sin(math.radians(61.0)), 0.0, -math.cos(math.radians(61.0))])
    assert rule.check(0.5, level) is None
    assert rule.check(0.1, level) == "height"
    assert rule.check(0.5, tilted) == "tilt"


# --- bad input --------------------------------------------------------------------------------------------------


def test_missing_bundle_is_clear(tmp_path, capsys):
    assert main(["sim2sim", "--bundle", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(BundleError, match="no metadata.json"):
        load_bundle(tmp_path / "empty")


def test_corrupt_metadata_is_clear(tmp_path, limit_bundle, capsys):
    folder = tmp_path / "corrupt"
    shutil.copytree(limit_bundle, folder)
    (folder / "metadata.json").write_text("{not json")
    assert main(["sim2sim", "--bundle", str(folder)]) == 2
    assert "not readable JSON" in capsys.readouterr().err
    metadata = json.loads((limit_bundle / "metadata.json").read_text())
    del metadata["kp"]
    (folder / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(BundleError, match="lacks kp"):
        load_bundle(folder)
    metadata = json.loads((limit_bundle / "metadata.json").read_text())
    (folder / "metadata.json").write_text(json.dumps({**metadata, "action_scale": [0.25] * 3}))
    with pytest.raises(BundleError, match="action_scale needs 12 values"):
        load_bundle(folder)


def test_unknown_robot_is_clear(tmp_path, limit_bundle, capsys):
    folder = tmp_path / "robotless"
    shutil.copytree(limit_bundle, folder)
    metadata = json.loads((folder / "metadata.json").read_text())
    (folder / "metadata.json").write_text(json.dumps({**metadata, "robot": "nobody"}))
    assert main(["sim2sim", "--bundle", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "unknown robot 'nobody'" in err and "limit" in err


def test_limit_bundle_without_deploy_config_is_clear(tmp_path, limit_bundle):
    folder = tmp_path / "no_deploy"
    shutil.copytree(limit_bundle, folder)
    (folder / "deploy.json").unlink()
    with pytest.raises(BundleError, match="lacks deploy.json"):
        run_sim2sim(folder, (0.3, 0.0), 0.1)


@pytest.mark.parametrize("text", ["fast", "0.3,0,1", "0.3;0.1", "", "nan"])
def test_malformed_command_is_clear(text, limit_bundle, capsys):
    with pytest.raises(ValueError, match="VX or VX,WZ"):
        parse_command(text)
    assert main(["sim2sim", "--bundle", str(limit_bundle), f"--command={text}"]) == 2
    assert "--command" in capsys.readouterr().err


def test_parse_command():
    assert parse_command("0.3") == (0.3, 0.0)
    assert parse_command("-0.2, 0.5") == (-0.2, 0.5)


def test_residual_race_command_is_the_residual_sprints():
    """The sim2sim race command (torch-free robot side) equals what the Isaac Lab residual sprint uses, and at
    the race's cadence its speed asks the gait for a stride the policy trained on."""
    from linkage_lab.robots.marvin.sim2sim import RESIDUAL_RACE
    from linkage_lab.sprint.runner import race_export_overrides
    from linkage_lab.tasks.sprint.config.marvin.env_cfg import MarvinResidualSprintEnvCfg
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg, marvin_gait_prior

    task_cfg = MarvinResidualFlatEnvCfg()
    ranges = task_cfg.commands.base_velocity.ranges
    race_cfg = MarvinResidualSprintEnvCfg()
    assert (
        RESIDUAL_RACE["forward_mps"],
        RESIDUAL_RACE["forward_mps"],
    ) == race_cfg.commands.base_velocity.ranges.lin_vel_x
    assert race_cfg.actions.joint_pos.frequency_hz == RESIDUAL_RACE["gait_frequency_hz"] == 1.2
    assert task_cfg.actions.joint_pos.frequency_hz is None  # the walking task keeps the gait's 0.88 Hz
    assert RESIDUAL_RACE["yaw_rate_limit_rads"] == ranges.ang_vel_z[1]
    assert race_export_overrides("LinkageLab-Velocity-Flat-Marvin-Residual") == [
        "env.actions.joint_pos.frequency_hz=1.2"
    ]
    prior = marvin_gait_prior(task_cfg.sim.dt * task_cfg.decimation)
    fast = prior.with_frequency(RESIDUAL_RACE["gait_frequency_hz"])
    stride = (RESIDUAL_RACE["forward_mps"] - prior.command_cfg.in_place_speed_mps) / fast.speed_per_stride_mps
    assert 0.7 < stride <= prior.command_cfg.max_stride_scale  # trained strides: 0 to max_stride_scale (0.8)


def test_a_race_refuses_a_bundle_whose_gait_steps_at_another_cadence():
    """gait.onnx holds the cadence: the residual race's command on a bundle of the walking task's gait is an error
    naming the export override; an explicit command races that bundle, and a matching bundle races as it is."""
    from linkage_lab.robots.marvin.sim2sim import RESIDUAL_RACE
    from linkage_lab.sim2sim.bundle import BundleError
    from linkage_lab.sim2sim.race import sprint_setup

    class Side:
        def __init__(self, frequency):
            self.gait_frequency_hz = frequency

        def sprint_command(self, scripted):
            return dict(RESIDUAL_RACE)

    with pytest.raises(BundleError, match=r"env.actions.joint_pos.frequency_hz=1.2"):
        sprint_setup(Side(0.88), None, scripted=False)
    command, hold = sprint_setup(Side(0.88), (0.4, 0.0), scripted=False)
    assert command.tolist() == [0.4, 0.0, 0.0] and hold["gain_per_s"] == RESIDUAL_RACE["heading_gain_per_s"]
    command, hold = sprint_setup(Side(1.2), None, scripted=False)
    assert command.tolist() == [RESIDUAL_RACE["forward_mps"], 0.0, 0.0]
    assert hold["lane_lookahead_m"] == RESIDUAL_RACE["lane_lookahead_m"]


def test_closed_chain_sweep_rows_are_the_runs_it_made(limit_bundle, tmp_path):
    """The sweep's rows against second, direct runs per command and kick (MuJoCo is deterministic), pooled by
    hand; written in ``eval --sweep``'s layout; a bundle of no project task carries no targets."""
    from linkage_lab.evaluation.sweep import SWEEP_FILE, CommandCase
    from linkage_lab.sim2sim.sweep import describe_case, episode_kicks, run_closed_chain_sweep, write_closed_chain_sweep

    cases = [CommandCase(0.0), CommandCase(0.3, 0.2)]
    seen = []
    sweep, reports = run_closed_chain_sweep(limit_bundle, cases, duration_s=0.4, on_case=seen.append, episodes=2)
    assert [row["command"] for row in sweep["cases"]] == [
        {"lin_vel_x_mps": 0.0, "ang_vel_z_radps": 0.0},
        {"lin_vel_x_mps": 0.3, "ang_vel_z_radps": 0.2},
    ]
    assert seen == sweep["cases"] and sweep["targets"] is None and sweep["summary"]["passed"] is None
    model = dataclasses.asdict(get_robot("limit").config().sensors)
    assert {k: sweep["sensor_noise"][k] for k in model} == model and "seed" not in sweep["sensor_noise"]
    assert describe_case(sweep["cases"][1]) == "  +0.30 m/s, +0.20 rad/s: 2 runs, no fall"
    fell = {**sweep["cases"][1], "fall_times_s": [1.5]}
    assert describe_case(fell) == "  +0.30 m/s, +0.20 rad/s: 2 runs, fell in 1 (at 1.50 s)"
    kicks = episode_kicks(2, seed=0)
    assert kicks[0] is None and all(abs(v) <= 0.25 for v in kicks[1]) and any(abs(v) > 0.01 for v in kicks[1])
    assert len(sweep["cases"]) == len(cases)  # the loop below compares each case
    for index, (case, row) in enumerate(zip(cases, sweep["cases"], strict=True)):
        # Each run reads the robot's sensor noise drawn from (sweep seed, case, run).
        direct = [
            run_sim2sim(
                limit_bundle, (case.lin_vel_x_mps, case.ang_vel_z_radps), 0.4, base_kick=k, noise_seed=(0, index, run)
            )
            for run, k in enumerate(kicks)
        ]
        assert [run["base_kick"] for run in row["runs"]] == [None, list(kicks[1])]
        assert row["episodes"] == 2 and row["falls"] == sum(d["falls"] for d in direct) == 0
        n = [d["control_steps"] for d in direct]
        rms = [d["tracking"]["lin_vel_xy_rms_mps"] for d in direct]
        mean = [d["tracking"]["mean_forward_speed_mps"] for d in direct]
        assert row["lin_vel_xy_rms_mps"] == pytest.approx(math.sqrt((n[0] * rms[0] ** 2 + n[1] * rms[1] ** 2) / sum(n)))
        assert row["mean_forward_speed_mps"] == pytest.approx((n[0] * mean[0] + n[1] * mean[1]) / sum(n))
        assert direct[0]["tracking"] != direct[1]["tracking"]  # the kicked run is another run
        assert row["simulated_s"] == pytest.approx(0.8, abs=0.02)
    path = write_closed_chain_sweep(tmp_path, sweep, reports)
    assert path == tmp_path / SWEEP_FILE and json.loads(path.read_text())["cases"] == sweep["cases"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.json", "sweep.png", *sorted(c.name for c in cases)]
    assert (tmp_path / cases[1].name / "run1" / "sim2sim.json").is_file()
    with pytest.raises(ValueError, match="names no task of this project"):
        run_closed_chain_sweep(limit_bundle)
    with pytest.raises(ValueError, match="at least one episode"):
        run_closed_chain_sweep(limit_bundle, cases, episodes=0)


def test_a_kick_sets_the_base_velocity_at_the_start(limit_bundle):
    """The kick against the free joint's velocity after the first tick: the base moves off at about the kick."""
    at_rest = run_sim2sim(limit_bundle, (0.0, 0.0), 0.02)
    kicked = run_sim2sim(limit_bundle, (0.0, 0.0), 0.02, base_kick=(0.2, 0.0, 0.0))
    assert kicked["base_kick"] == [0.2, 0.0, 0.0] and at_rest["base_kick"] is None
    gained = kicked["tracking"]["mean_forward_speed_mps"] - at_rest["tracking"]["mean_forward_speed_mps"]
    assert 0.1 < gained <= 0.2 + 1e-6
    with pytest.raises(ValueError, match="three finite numbers"):
        run_sim2sim(limit_bundle, (0.0, 0.0), 0.02, base_kick=(0.2, float("nan"), 0.0))


def test_closed_chain_sweep_judges_by_the_bundle_tasks_acceptance(limit_bundle, tmp_path):
    """A zero-action Limit stands but cannot walk: on the Limit task's acceptance the standing case passes
    and every walking case misses its velocity target."""
    from linkage_lab.sim2sim.sweep import run_closed_chain_sweep

    folder = tmp_path / "limit"
    shutil.copytree(limit_bundle, folder)
    metadata = json.loads((folder / "metadata.json").read_text())
    (folder / "metadata.json").write_text(json.dumps({**metadata, "task": "LinkageLab-Velocity-Flat-Limit"}))
    sweep, _ = run_closed_chain_sweep(folder, duration_s=1.0)
    assert sweep["episodes_per_case"] == 1
    # Judged by the closed-chain marks of the task (0.08 m/s there, 0.06 in Isaac Lab).
    assert sweep["task"] == "LinkageLab-Velocity-Flat-Limit" and sweep["targets"]["lin_vel_rms_mps"] == 0.08
    by_command = {(r["command"]["lin_vel_x_mps"], r["command"]["ang_vel_z_radps"]): r for r in sweep["cases"]}
    assert all(check["ok"] for check in by_command[(0.0, 0.0)]["checks"].values())
    for vx in (-0.3, 0.3, 0.5):
        assert not by_command[(vx, 0.0)]["checks"]["lin_vel_xy_rms_mps"]["ok"]
    assert sweep["summary"]["passed"] is False


def test_sweep_refuses_single_run_options(limit_bundle, capsys):
    assert main(["sim2sim", "--bundle", str(limit_bundle), "--sweep", "--command", "0.3"]) == 2
    assert "--sweep runs the bundle's policy at the task's own commands" in capsys.readouterr().err
    assert main(["sim2sim", "--bundle", str(limit_bundle), "--episodes", "2"]) == 2
    assert "--episodes is a setting of --sweep" in capsys.readouterr().err
    assert main(["sim2sim", "--bundle", str(limit_bundle), "--sweep", "--episodes", "0"]) == 2
    assert "--episodes must be at least 1" in capsys.readouterr().err


def _command_policy(tmp_path, **extra):
    """A hand-made three-joint bundle whose action is its command, as a :class:`BundlePolicy`."""
    from linkage_lab.sim2sim.bundle import BundlePolicy

    names = ["a", "b", "c"]
    layout = [
        {"name": "velocity_commands", "size": 3, "function": "isaaclab.mdp.generated_commands"},
        {"name": "actions", "size": 3, "function": "isaaclab.mdp.last_action"},
        {"name": "previous_action", "size": 3, "function": "linkage_lab.tasks.velocity.history.previous_action"},
    ]
    metadata = {
        **{key: [0.0] * 3 for key in ("default_joint_pos", "action_offset", "kp", "kd")},
        "robot": "marvin",
        "task": "hand-made",
        "control_period_s": 0.02,
        "joint_names": names,
        "action_scale": [1.0] * 3,
        "observation_layout": layout,
        **extra,
    }
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    # actions = the command: each tick's action is known, so the observation's two action blocks are checkable.
    weight = np.zeros((9, 3), dtype=np.float32)
    weight[:3] = np.eye(3)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["actions"])],
        "command",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, 9])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor("w", TensorProto.FLOAT, [9, 3], weight.ravel().tolist())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "policy.onnx"))
    return BundlePolicy(load_bundle(tmp_path))


def test_the_bundle_policy_observes_its_last_two_actions_in_order(tmp_path):
    policy = _command_policy(tmp_path)
    commands = [np.array([k, 10.0 * k, -k]) for k in (1.0, 2.0, 3.0)]
    for command in commands:
        policy.act({"generated_commands": command})
    np.testing.assert_allclose(policy.last_observation, np.concatenate(commands[::-1]))
    policy.reset()
    policy.act({"generated_commands": commands[0]})
    np.testing.assert_allclose(policy.last_observation[3:], 0.0)


def test_the_bundle_policy_smooths_its_targets_as_training_does(tmp_path):
    # q* = a (offset 0, scale 1), then q_t = 0.25 q*_t + 0.75 q_{t-1} from the episode's first target on.
    policy = _command_policy(tmp_path, action_target_filter_alpha=0.25)
    commands = [np.array([4.0, -8.0, 2.0]), np.array([0.0, 0.0, 0.0]), np.array([8.0, 8.0, 8.0])]
    targets = [policy.step({"generated_commands": command}) for command in commands]
    np.testing.assert_allclose(targets[0], commands[0])
    np.testing.assert_allclose(targets[1], 0.75 * commands[0])
    np.testing.assert_allclose(targets[2], 0.25 * commands[2] + 0.75 * 0.75 * commands[0])
    policy.reset()
    np.testing.assert_allclose(policy.step({"generated_commands": commands[2]}), commands[2])


def test_a_bundle_with_a_gait_clock_counts_its_ticks(tmp_path):
    from linkage_lab.sim2sim.bundle import BundlePolicy

    metadata = _metadata("limit", [20.0] * 12, [0.5] * 12)
    clock = {"name": "gait_clock", "size": 2, "scale": 1.0, "clip": None, "function": "x.gait_clock"}
    metadata["observation_layout"].append(clock)
    clockless = {
        "observation_layout": metadata["observation_layout"][:-1],
        "observation_size": metadata["observation_size"],
    }
    _write_bundle(tmp_path / "clockless", {**metadata, **clockless})
    metadata["observation_size"] += 2
    _write_bundle(tmp_path / "clock", metadata)
    with pytest.raises(BundleError, match="frequency_hz"):  # the term must say how fast its clock runs
        BundlePolicy(load_bundle(tmp_path / "clock"))
    clock["params"] = {"frequency_hz": 2.0}
    _write_bundle(tmp_path / "clock", metadata)
    policy = BundlePolicy(load_bundle(tmp_path / "clock"))
    values = {function: np.zeros(size or 12) for _, function, size in TERMS}
    seen = []
    for _ in range(3):
        policy.act(values)
        seen.append(policy.last_observation[-2:])
    # 0.02 s ticks at 2 Hz: phases 0, 0.04, 0.08 of a cycle.
    angles = 2 * math.pi * np.array([0.0, 0.04, 0.08])
    np.testing.assert_allclose(np.array(seen), np.stack([np.sin(angles), np.cos(angles)], axis=1), atol=1e-6)
    policy.reset()
    policy.act(values)
    np.testing.assert_allclose(policy.last_observation[-2:], [0.0, 1.0], atol=1e-7)
    assert BundlePolicy(load_bundle(tmp_path / "clockless")).clock is None

"""The plain MuJoCo model of ``bench physics``: the task's numbers, standing, and the throughput row."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def limit_spec():
    from linkage_lab.runtime import resolve_configs
    from linkage_lab_experiments.bench.physics_bench import spec_from_env_cfg

    env_cfg, _ = resolve_configs("LinkageLab-Velocity-Flat-Limit", [], "cpu")
    return spec_from_env_cfg(env_cfg)


def test_spec_takes_the_tasks_step_gains_armature_and_pose(limit_spec):
    # Hand values of configs/robots/limit.yaml and the task: 2.5 ms, decimation 8, one substep,
    # hip/knee K_p 60 N·m/rad, K_d 1.2 N·m·s/rad, ankle 30 / 0.6; hip armature 2 N²J_m = 0.008 (S3N-Act: both
    # motors), knee and ankle 0.004; standing pose (0.5, -1.0, 0.5).
    spec = limit_spec
    assert spec.urdf.name == "limit.urdf" and spec.urdf.is_file()
    assert (spec.timestep_s, spec.steps_per_env_step) == (0.0025, 8)
    assert len(spec.joint_pos_rad) == 12
    assert (spec.stiffness["fl_hip"], spec.stiffness["rr_knee"], spec.stiffness["fr_ankle"]) == (60.0, 60.0, 30.0)
    assert (spec.damping["fl_hip"], spec.damping["rr_knee"], spec.damping["fr_ankle"]) == (1.2, 1.2, 0.6)
    assert spec.armature["fl_hip"] == pytest.approx(0.008) and spec.armature["rr_knee"] == pytest.approx(0.004)
    assert spec.armature["fr_ankle"] == pytest.approx(0.004)
    assert (spec.joint_pos_rad["rl_hip"], spec.joint_pos_rad["rl_knee"]) == (0.5, -1.0)


def test_plain_model_has_a_servo_per_joint_and_stands(limit_spec):
    import mujoco

    from linkage_lab_experiments.bench.physics_bench import build_plain_model, initial_state, plain_mujoco_throughput

    model = build_plain_model(limit_spec)
    assert (model.nu, model.opt.timestep) == (12, 0.0025)
    joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "fl_hip")
    assert model.dof_armature[model.jnt_dofadr[joint]] == pytest.approx(0.008)
    actuator = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "fl_hip")
    assert model.actuator_gainprm[actuator, 0] == 60.0
    assert tuple(model.actuator_biasprm[actuator, 1:3]) == (-60.0, -1.2)
    _, targets = initial_state(model, limit_spec)
    assert sorted(set(targets.round(6))) == [-1.0, 0.5]
    row = plain_mujoco_throughput(limit_spec, num_envs=4, env_steps=100, threads=1)
    assert row["env_steps_per_s"] > 0
    # Two seconds on its servos: the base settles onto its feet, neither falls through nor tips over.
    assert 0.12 < row["final_base_height_m"]["min"] <= row["final_base_height_m"]["max"] < limit_spec.base_height_m


def test_comparison_table_shows_each_ratio():
    from linkage_lab_experiments.bench.physics_bench import format_comparison

    rows = [
        {
            "num_envs": 256,
            "task_env_steps_per_s": 1500.0,
            "plain_mujoco": [{"threads": 1, "env_steps_per_s": 10000.0}, {"threads": 2, "env_steps_per_s": 20000.0}],
            "task_over_plain": {"1": 0.15, "2": 0.075},
        }
    ]
    table = format_comparison(rows)
    assert "15.0%" in table and "7.5%" in table and "1500" in table

"""The stair check (docs/design/robots.md §2.5): step-up pose, ankle demand, capacities and ``marvin step-up``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from linkage_lab.cli.main import main
from linkage_lab.robots.ankles import ankle_pair
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.registry import get_robot
from linkage_lab.statics.step_up import FIT_KEYS, step_up_check
from linkage_lab.statics.step_up_pose import StepUpPoseCfg, StepUpPoseError, solve_step_up_pose
from linkage_lab.statics.tree import KinematicTree

pytestmark = pytest.mark.unit

G = 9.81
FOOT_MASS, CROSS_MASS = 0.7, 0.1
#: Sole box centre in the foot frame (docs/design/robots.md §2.2): 0.04 m ahead, 0.045 m below the ankle.
FOOT_COM = np.array([0.22 / 2 - 0.07, 0.0, -0.06 + 0.03 / 2])


@pytest.fixture(scope="module")
def tree() -> KinematicTree:
    return KinematicTree(build_marvin_model(get_robot("marvin").config()))


@pytest.fixture(scope="module")
def pose(tree):
    return solve_step_up_pose(tree)


@pytest.fixture(scope="module")
def result():
    return step_up_check(get_robot("marvin").description_model(), ankle_pair(robot="marvin"))


def test_feet_where_the_pose_puts_them(pose):
    stance, swing = pose.frames["left_foot"], pose.frames["right_foot"]
    np.testing.assert_allclose(stance.position, 0.0, atol=1e-12)
    np.testing.assert_allclose(stance.rotation, np.eye(3), atol=1e-12)  # flat on the step
    np.testing.assert_allclose(swing.position, [-0.28, -0.18, -0.18], atol=1e-12)  # one tread behind, below
    np.testing.assert_allclose(swing.rotation, np.eye(3), atol=1e-12)
    assert pose.joint_pos["right_knee"] == pytest.approx(0.0, abs=1e-6)  # straight trailing leg


def test_com_held_inside_the_sole_with_the_margin(pose):
    (x_lo, x_hi), (y_lo, y_hi) = pose.sole_m
    assert (x_lo, x_hi, y_lo, y_hi) == pytest.approx((-0.07, 0.15, -0.055, 0.055))
    # The natural pose (pelvis between the ankles) has the COM behind and inboard of the sole ...
    assert pose.natural_com_m[0] < x_lo and pose.natural_com_m[1] < y_lo
    # ... so balancing moves it to the nearest point of the sole shrunk by 2 cm: its rear inner corner.
    np.testing.assert_allclose(pose.com_m[:2], [x_lo + 0.02, y_lo + 0.02], atol=1e-9)


def test_stance_ankle_stays_in_range_and_torso_leans_only_when_capped(pose, tree):
    assert pose.limit_violations == []
    cap = tree.joint_by_name["left_ankle_pitch"].limit_rad[1]
    assert pose.joint_pos["left_ankle_pitch"] <= cap + 1e-9
    assert pose.ankle_pitch_limited == (pose.torso_lean_rad > 0.0)
    assert pose.joint_pos["left_shoulder_pitch"] == pytest.approx(-pose.torso_lean_rad)  # arms plumb


def test_demand_is_the_weight_above_the_ankle_by_hand(pose, result):
    """τ_roll = −m g c_y and τ_pitch = −m g c_x cos(q_roll) for the mass m above a flat foot's ankle."""
    supported = 40.0 - FOOT_MASS - CROSS_MASS
    com = (40.0 * pose.com_m - FOOT_MASS * FOOT_COM) / supported  # the cross sits at the ankle centre
    roll = pose.joint_pos["left_ankle_roll"]
    assert result["supported_mass_kg"] == pytest.approx(supported)
    assert result["demand_nm"]["roll"] == pytest.approx(-supported * G * com[1], rel=1e-9)
    assert result["demand_nm"]["pitch"] == pytest.approx(-supported * G * com[0] * math.cos(roll), rel=1e-9)


def test_ankle_cap_makes_the_torso_lean(tree, pose):
    """A lower dorsiflexion cap stops the pelvis sooner; the torso leans further to reach the same COM."""
    capped = solve_step_up_pose(tree, StepUpPoseCfg(max_stance_ankle_pitch_rad=0.5))
    assert capped.ankle_pitch_limited
    assert capped.joint_pos["left_ankle_pitch"] == pytest.approx(0.5, abs=1e-9)
    assert capped.torso_lean_rad > pose.torso_lean_rad
    np.testing.assert_allclose(capped.com_m[:2], pose.com_target_m, atol=1e-9)
    # A 1 cm margin asks less of the pelvis: the ankle stays under its cap and the torso upright.
    loose = solve_step_up_pose(tree, StepUpPoseCfg(com_margin_m=0.01))
    assert not loose.ankle_pitch_limited and loose.torso_lean_rad == 0.0


def test_motor_torques_reproduce_the_demand(result):
    jac = torch.tensor(result["jacobian"], dtype=torch.float64)
    motor = torch.tensor([result["motor_torque_nm"]["a"], result["motor_torque_nm"]["b"]], dtype=torch.float64)
    demand = jac.T @ motor
    assert demand.tolist() == pytest.approx([result["demand_nm"]["pitch"], result["demand_nm"]["roll"]])
    largest = max(abs(v) for v in result["motor_torque_nm"].values())
    assert result["fits_diamond_rated"] == (largest <= 20.0)
    assert result["fits_diamond_peak"] == (largest <= 60.0)


def test_verdicts_follow_the_numbers(result):
    demand, axis, pure = (
        result["demand_nm"],
        result["worst_axis_capacity_nm"],
        result["worst_pure_capacity_nm"],
    )
    assert result["fits_worst_axis_rated"] == (
        abs(demand["pitch"]) <= axis["pitch_rated"] and abs(demand["roll"]) <= axis["roll_rated"]
    )
    assert result["fits_worst_pure_rated"] == (
        abs(demand["pitch"]) <= pure["pitch_rated"] and abs(demand["roll"]) <= pure["roll_rated"]
    )
    # Worst-pose capacities are minima over the range: never above the neutral box (2 T ratio).
    assert axis["pitch_rated"] <= 2 * 20.0 * 0.99 + 0.5 and axis["roll_rated"] <= 2 * 20.0 * 0.67 + 0.5


def test_right_stance_mirrors_the_left(result):
    model = get_robot("marvin").description_model()
    right = step_up_check(model, ankle_pair(robot="marvin"), StepUpPoseCfg(stance_side="right"))
    assert right["demand_nm"]["pitch"] == pytest.approx(result["demand_nm"]["pitch"], rel=1e-6)
    assert right["demand_nm"]["roll"] == pytest.approx(-result["demand_nm"]["roll"], rel=1e-6)
    assert right["motor_torque_nm"]["a"] == pytest.approx(result["motor_torque_nm"]["a"], rel=1e-6)
    assert right["motor_torque_nm"]["b"] == pytest.approx(result["motor_torque_nm"]["b"], rel=1e-6)
    assert right["com"]["inboard_of_ankle_m"] == pytest.approx(result["com"]["inboard_of_ankle_m"])


def test_unreachable_trailing_foot_is_an_error(tree):
    with pytest.raises(StepUpPoseError, match="reach"):
        solve_step_up_pose(tree, StepUpPoseCfg(tread_m=1.0))


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="step_height_m"):
        StepUpPoseCfg(step_height_m=-0.1)
    with pytest.raises(ValueError, match="stance_side"):
        StepUpPoseCfg(stance_side="middle")  # type: ignore[arg-type]


def _cli_json(capsys, *args: str) -> dict:
    assert main(["marvin", "step-up", "--json", *args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one JSON object on one line
    return json.loads(out)


def test_cli_json_schema(capsys):
    data = _cli_json(capsys)
    assert set(data) == {
        "stance_side",
        "preset",
        "pose",
        "com",
        "supported_mass_kg",
        "demand_nm",
        "stance_joint_torques_nm",
        "motor",
        "worst_axis_capacity_nm",
        "worst_pure_capacity_nm",
        "jacobian",
        "motor_torque_nm",
        *FIT_KEYS,
    }
    assert set(data["pose"]) == {
        "params",
        "pelvis_position_m",
        "torso_lean_deg",
        "stance_ankle_deg",
        "stance_ankle_at_pitch_cap",
        "swing_ankle_m",
        "joint_pos_rad",
        "limit_violations",
    }
    assert data["pose"]["params"]["step_height_m"] == 0.18
    assert len(data["pose"]["joint_pos_rad"]) == 16
    assert set(data["com"]) >= {"mass_kg", "position_m", "ahead_of_ankle_m", "inboard_of_ankle_m"}
    assert set(data["demand_nm"]) == {"pitch", "roll"} and set(data["motor_torque_nm"]) == {"a", "b"}
    for key in ("worst_axis_capacity_nm", "worst_pure_capacity_nm"):
        assert set(data[key]) == {"pitch_peak", "pitch_rated", "roll_peak", "roll_rated"}
    assert data["motor"] == {"name": "RS03", "rated_nm": 20.0, "peak_nm": 60.0}
    assert all(isinstance(data[key], bool) for key in FIT_KEYS)


def test_cli_pose_options_and_pose_json(capsys, tmp_path):
    path = tmp_path / "pose.json"
    path.write_text(json.dumps({"tread_m": 0.2, "com_margin_m": 0.01}))
    from_file = _cli_json(capsys, "--pose-json", str(path), "--step-height", "0.15")
    params = from_file["pose"]["params"]
    assert (params["tread_m"], params["com_margin_m"], params["step_height_m"]) == (0.2, 0.01, 0.15)
    inline = _cli_json(capsys, "--pose-json", '{"tread_m": 0.2, "com_margin_m": 0.01}', "--tread", "0.25")
    assert inline["pose"]["params"]["tread_m"] == 0.25  # the flag wins over the JSON


def test_cli_text_and_errors(capsys):
    assert main(["marvin", "step-up"]) == 0
    out = capsys.readouterr().out
    for text in ("ankle demand", "worst-pose axis", "worst-pose pure axis", "diamond at the pose", "COM"):
        assert text in out
    assert main(["marvin", "step-up", "--pose-json", '{"nope": 1}']) == 2
    assert "unknown pose parameters" in capsys.readouterr().err
    assert main(["marvin", "step-up", "--tread", "1.0"]) == 2
    assert "reach" in capsys.readouterr().err
    assert main(["marvin", "step-up", "--pose-json", "{not json"]) == 2

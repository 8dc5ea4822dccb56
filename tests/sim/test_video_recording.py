"""The video recorder on a real env: env 0's pose in MuJoCo's order, against Isaac Lab's gravity and heading."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.sim

LIMIT = "LinkageLab-Velocity-Flat-Limit"


def test_eval_records_env_zero_in_mujoco_order(tmp_path):
    import mujoco

    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate
    from linkage_lab.evaluation.offscreen import RenderUnavailable
    from linkage_lab.evaluation.video import RolloutRecorder, render_video
    from linkage_lab.paths import ASSET_DIR

    recorder = RolloutRecorder()
    gravity_b, heading = [], []

    def on_step(env):
        recorder(env)
        data = env.unwrapped.scene["robot"].data
        gravity_b.append(data.projected_gravity_b.torch[0].cpu().numpy().copy())
        heading.append(float(data.heading_w.torch[0]))

    request = EvalRequest(
        task=LIMIT,
        policy="scripted",
        episodes=1,
        num_envs=2,
        max_steps=10,
        out_dir=tmp_path / "eval",
        progress=False,
        on_step=on_step,
    )
    evaluate(request)
    recording = recorder.recording()
    assert len(recording) == 10 and recording.control_period_s > 0
    assert recording.robot_urdf == ASSET_DIR / "limit" / "limit.urdf"
    assert len(recording.joint_names) == 12
    for quat, gravity, yaw in zip(recording.base_quat_wxyz, gravity_b, heading):
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, quat)
        rotation = rotation.reshape(3, 3)
        # Isaac Lab's projected gravity is R^T (0, 0, -1); its heading is the yaw of the body x axis.
        np.testing.assert_allclose(rotation.T @ [0.0, 0.0, -1.0], gravity, atol=1e-4)
        assert math.remainder(math.atan2(rotation[1, 0], rotation[0, 0]) - yaw, 2 * math.pi) == pytest.approx(
            0.0, abs=1e-4
        )
    # Positions are env 0's, relative to its origin: the robot spawns over it.
    assert np.abs(recording.base_pos[:, :2]).max() < 0.5 and recording.base_pos[:, 2].min() > 0.0

    try:
        result = render_video(None, recording, tmp_path / "rollout.gif", fps=25.0, width=64, height=48)
    except RenderUnavailable as exc:
        pytest.skip(f"no OpenGL backend on this machine: {exc}")
    assert result.frames == math.ceil(10 / round(1.0 / (25.0 * recording.control_period_s)))

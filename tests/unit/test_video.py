"""Rollout videos: quaternion order, joints matched by name, frames rendered and encoded, the no-GL fallback."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from linkage_lab.evaluation import offscreen
from linkage_lab.evaluation.offscreen import OffscreenRenderer, RenderUnavailable, build_scene
from linkage_lab.evaluation.video import (
    RolloutRecorder,
    check_video_path,
    frame_indices,
    joint_qpos_addresses,
    render_video,
    save_rollout_video,
    set_pose,
    xyzw_to_wxyz,
)
from linkage_lab.paths import ASSET_DIR

pytestmark = pytest.mark.unit


class _Scene(dict):
    """An interactive scene's two faces the recorder uses: ``scene["robot"]`` and ``env_origins``."""

    def __init__(self, robot, env_origins):
        super().__init__(robot=robot)
        self.env_origins = env_origins


LIMIT_URDF = ASSET_DIR / "limit" / "limit.urdf"
LIMIT_JOINTS = [f"{leg}_{joint}" for leg in ("fl", "fr", "rl", "rr") for joint in ("hip", "knee", "ankle")]
STANDING = [0.0, 0.0, 0.32]
IDENTITY_XYZW = [0.0, 0.0, 0.0, 1.0]


@pytest.fixture(scope="module")
def model():
    return build_scene(LIMIT_URDF, 64, 48)


def _recording(joint_names, joint_rows, base_pos=STANDING, quat_xyzw=IDENTITY_XYZW):
    recorder = RolloutRecorder(joint_names=list(joint_names), control_period_s=0.02, robot_urdf=LIMIT_URDF)
    for row in joint_rows:
        recorder.add(base_pos, quat_xyzw, row)
    return recorder.recording()


def _rendered_or_skip(fn):
    try:
        return fn()
    except RenderUnavailable as exc:
        pytest.skip(f"no OpenGL backend on this machine: {exc}")


def test_quaternion_xyzw_to_wxyz_hand_value():
    s = math.sin(math.pi / 4)
    np.testing.assert_allclose(xyzw_to_wxyz([0.0, 0.0, s, s]), [s, 0.0, 0.0, s])
    np.testing.assert_allclose(xyzw_to_wxyz([[0.1, 0.2, 0.3, 0.9]]), [[0.9, 0.1, 0.2, 0.3]])


def test_recorded_yaw_turns_the_base_in_mujoco(model):
    # Isaac Lab's (x, y, z, w) for +90° about z: the base's x axis must point along world +y.
    import mujoco

    s = math.sin(math.pi / 4)
    recording = _recording(LIMIT_JOINTS, [np.zeros(12)], quat_xyzw=[0.0, 0.0, s, s])
    data = mujoco.MjData(model)
    set_pose(model, data, recording, 0, joint_qpos_addresses(model, LIMIT_JOINTS))
    rotation = data.body("base_link").xmat.reshape(3, 3)
    np.testing.assert_allclose(rotation[:, 0], [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(data.body("base_link").xpos, STANDING, atol=1e-12)


def test_joints_are_matched_by_name_not_index(model):
    import mujoco

    shuffled = list(reversed(LIMIT_JOINTS))
    row = np.zeros(12)
    row[shuffled.index("fl_knee")] = 0.7
    data = mujoco.MjData(model)
    set_pose(model, data, _recording(shuffled, [row]), 0, joint_qpos_addresses(model, shuffled))
    for name in LIMIT_JOINTS:
        expected = 0.7 if name == "fl_knee" else 0.0
        assert data.qpos[model.joint(name).qposadr[0]] == pytest.approx(expected)


def test_joint_sets_that_differ_are_an_error(model):
    with pytest.raises(ValueError, match="missing \\['rr_ankle'\\], unknown \\['tail'\\]"):
        joint_qpos_addresses(model, LIMIT_JOINTS[:-1] + ["tail"])


def test_frame_indices_play_in_real_time():
    indices, fps = frame_indices(7, 0.02, 25.0)  # 50 Hz control at 25 fps: every second step
    assert indices.tolist() == [0, 2, 4, 6] and fps == pytest.approx(25.0)
    indices, fps = frame_indices(3, 0.05, 25.0)  # slower control than the video: every step
    assert indices.tolist() == [0, 1, 2] and fps == pytest.approx(20.0)


def test_only_mp4_and_gif_are_accepted():
    assert check_video_path("a/b.MP4") == Path("a/b.MP4")
    with pytest.raises(ValueError, match="mp4 or .gif"):
        check_video_path("clip.avi")


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_three_frames_decode_at_the_right_size(tmp_path, suffix):
    rows = [np.zeros(12), np.full(12, 0.2), np.full(12, -0.2)]
    out = tmp_path / f"limit{suffix}"
    result = _rendered_or_skip(
        lambda: render_video(LIMIT_URDF, _recording(LIMIT_JOINTS, rows), out, fps=50.0, width=96, height=64)
    )
    assert result.frames == 3 and result.fps == pytest.approx(50.0)
    if suffix == ".gif":
        from PIL import Image

        with Image.open(out) as image:
            assert image.n_frames == 3 and image.size == (96, 64)
    else:
        import imageio.v2 as imageio

        with imageio.get_reader(out, format="FFMPEG") as reader:
            frames = list(reader.iter_data())  # len(reader) is unknown (huge) for a stream
        assert len(frames) == 3 and frames[0].shape == (64, 96, 3)
    assert not list(tmp_path.glob(".*"))  # no temp file left behind


def test_a_joint_angle_changes_the_image(model):
    import mujoco

    addresses = joint_qpos_addresses(model, LIMIT_JOINTS)
    bent = np.zeros(12)
    bent[LIMIT_JOINTS.index("fl_hip")] = 0.8
    recording = _recording(LIMIT_JOINTS, [np.zeros(12), bent])
    data = mujoco.MjData(model)
    camera = mujoco.MjvCamera()  # from the left, on the front-left leg
    camera.lookat[:] = [0.15, 0.1, 0.2]
    camera.distance, camera.azimuth, camera.elevation = 0.6, 90.0, -10.0

    def frame(index):
        set_pose(model, data, recording, index, addresses)
        return renderer.render(data, camera).astype(np.int16)

    renderer = _rendered_or_skip(lambda: OffscreenRenderer(model, 64, 48))
    with renderer:
        straight, again, bent_image = frame(0), frame(0), frame(1)
    assert np.array_equal(straight, again)  # rendering is repeatable, so a difference comes from the pose
    changed = (np.abs(bent_image - straight).max(axis=-1) > 30).mean()
    assert changed > 0.01


def test_recorder_reads_env_zero_relative_to_its_origin():
    def proxy(values):
        return SimpleNamespace(torch=torch.tensor(values))

    robot = SimpleNamespace(
        joint_names=["b", "a"],
        cfg=SimpleNamespace(spawn=SimpleNamespace(usd_path="/x/limit/limit.usd")),
        data=SimpleNamespace(
            root_pos_w=proxy([[5.0, 6.0, 0.3], [9.0, 9.0, 9.0]]),
            root_quat_w=proxy([[0.0, 0.0, 0.6, 0.8], [0.0, 0.0, 0.0, 1.0]]),
            joint_pos=proxy([[0.1, 0.2], [0.3, 0.4]]),
        ),
    )
    scene = _Scene(robot, env_origins=torch.tensor([[4.0, 6.0, 0.0], [8.0, 8.0, 0.0]]))
    env = SimpleNamespace(unwrapped=SimpleNamespace(scene=scene, step_dt=0.02))
    recorder = RolloutRecorder()
    recorder(env)
    robot.data.root_pos_w.torch[0, 0] = 100.0  # the simulator reuses its buffers: the sample is a copy
    recording = recorder.recording()
    assert recording.joint_names == ["b", "a"] and recording.control_period_s == 0.02
    assert recording.robot_urdf == Path("/x/limit/limit.urdf")
    np.testing.assert_allclose(recording.base_pos, [[1.0, 0.0, 0.3]], atol=1e-7)
    np.testing.assert_allclose(recording.base_quat_wxyz, [[0.8, 0.0, 0.0, 0.6]], atol=1e-7)
    np.testing.assert_allclose(recording.joint_pos, [[0.1, 0.2]], atol=1e-7)


def test_no_gl_backend_is_one_line_and_no_file(tmp_path, monkeypatch):
    def unavailable(width, height):
        raise RenderUnavailable("no OpenGL backend for offscreen rendering: egl: cannot open libEGL\n(details)")

    monkeypatch.setattr(offscreen, "_gl_context", unavailable)
    recorder = RolloutRecorder(joint_names=LIMIT_JOINTS, control_period_s=0.02, robot_urdf=LIMIT_URDF)
    recorder.add(STANDING, IDENTITY_XYZW, np.zeros(12))
    line = save_rollout_video(recorder, tmp_path / "clip.mp4", progress=False)
    assert line.startswith("video: not written (no OpenGL backend") and "\n" not in line
    assert not list(tmp_path.iterdir())


def test_bench_video_renders_every_synthetic_sample():
    from linkage_lab_experiments.bench.video_bench import format_rows, run_video_bench

    rows = _rendered_or_skip(lambda: run_video_bench("limit", frames=3, sizes=[(32, 24)]))
    assert [(r["width"], r["height"], r["frames"]) for r in rows] == [(32, 24, 3)]
    assert rows[0]["mp4_bytes"] > 0 and rows[0]["total_s_per_frame"] >= rows[0]["render_s_per_frame"] > 0
    assert format_rows(rows).splitlines()[1].split()[:3] == ["limit", "32x24", "3"]

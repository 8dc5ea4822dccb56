"""Rollout videos: env 0's recorded base pose and joint angles replayed on the robot's URDF in MuJoCo, offscreen.

Nothing here imports the simulator. :class:`RolloutRecorder` is called with the env after each control
step and keeps env 0's base position, base orientation and joint angles by name; :func:`render_video`
loads the robot's generated URDF into MuJoCo (:mod:`~linkage_lab.evaluation.offscreen`: visual
geometry kept, a free base, a checkered floor, lights), poses it from each recorded sample with
:func:`mujoco.mj_kinematics` (no physics is stepped) and renders it with a camera that follows the
base. MP4 (H.264) goes through imageio-ffmpeg, whose wheel ships its own ffmpeg binary; a ``.gif``
path is written with Pillow.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.evaluation.offscreen import OffscreenRenderer, RenderUnavailable, build_scene

#: File types :func:`render_video` writes.
VIDEO_SUFFIXES = (".mp4", ".gif")
#: Default frame rate (1/s); frames are picked from the control steps at about this rate.
DEFAULT_FPS = 25.0
#: Default frame size (pixels).
DEFAULT_WIDTH, DEFAULT_HEIGHT = 640, 480


class VideoError(RuntimeError):
    """A video could not be written (the rollout's results are unaffected)."""


def xyzw_to_wxyz(quat_xyzw: Any) -> np.ndarray:
    """Reorder quaternions from Isaac Lab's ``(x, y, z, w)`` to MuJoCo's ``(w, x, y, z)``.

    Args:
        quat_xyzw: Quaternion(s), shape ``(..., 4)``.
    """
    quat = np.asarray(quat_xyzw, dtype=np.float64)
    return np.concatenate([quat[..., 3:4], quat[..., 0:3]], axis=-1)


@dataclass
class RolloutRecording:
    """One env's rollout, sampled once per control step.

    Attributes:
        joint_names: Joint names, the column order of ``joint_pos``.
        control_period_s: Time between samples (s).
        base_pos: Base position in the env's frame, ``(T, 3)`` (m).
        base_quat_wxyz: Base orientation in the world frame, MuJoCo order, ``(T, 4)``.
        joint_pos: Joint angles, ``(T, J)`` (rad).
        robot_urdf: The robot's generated description; ``None``: given to :func:`render_video` instead.
    """

    joint_names: list[str]
    control_period_s: float
    base_pos: np.ndarray
    base_quat_wxyz: np.ndarray
    joint_pos: np.ndarray
    robot_urdf: Path | None = None

    def __len__(self) -> int:
        return len(self.base_pos)


@dataclass
class RolloutRecorder:
    """Collects env 0's base pose and joint angles once per control step.

    Call it with the env (wrapped or not) after every ``env.step``; on the first call it reads the
    robot's joint names, the control period and the robot's URDF (beside the USD it was spawned from).
    :meth:`add` takes samples directly, for code that has no env.

    Attributes:
        joint_names: Joint names of the samples; ``None`` until the first call reads them off the env.
        control_period_s: Time between samples (s); ``None`` until read off the env.
        robot_urdf: The robot's URDF; ``None`` until read off the env.
    """

    joint_names: list[str] | None = None
    control_period_s: float | None = None
    robot_urdf: Path | None = None
    _base_pos: list[np.ndarray] = field(default_factory=list, repr=False)
    _base_quat: list[np.ndarray] = field(default_factory=list, repr=False)
    _joint_pos: list[np.ndarray] = field(default_factory=list, repr=False)

    def __call__(self, env: Any) -> None:
        """Record env 0 of ``env`` (an Isaac Lab env with a ``robot`` articulation, possibly wrapped)."""
        unwrapped = env.unwrapped
        robot = unwrapped.scene["robot"]
        if self.joint_names is None:
            self.joint_names = list(robot.joint_names)
            self.control_period_s = float(unwrapped.step_dt)
            self.robot_urdf = Path(robot.cfg.spawn.usd_path).with_suffix(".urdf")
        origin = unwrapped.scene.env_origins[0]
        data = robot.data
        self.add(data.root_pos_w.torch[0] - origin, data.root_quat_w.torch[0], data.joint_pos.torch[0])

    def add(self, base_pos: Any, base_quat_xyzw: Any, joint_pos: Any) -> None:
        """Append one sample (copied).

        Args:
            base_pos: Base position, ``(3,)`` (m).
            base_quat_xyzw: Base orientation, Isaac Lab order ``(x, y, z, w)``.
            joint_pos: Joint angles in :attr:`joint_names` order (rad).
        """
        self._base_pos.append(_to_numpy(base_pos))
        self._base_quat.append(xyzw_to_wxyz(_to_numpy(base_quat_xyzw)))
        self._joint_pos.append(_to_numpy(joint_pos))

    def __len__(self) -> int:
        return len(self._base_pos)

    def recording(self) -> RolloutRecording:
        """The samples so far.

        Raises:
            VideoError: Nothing was recorded, or joint names / control period are unknown.
        """
        if not self._base_pos or self.joint_names is None or self.control_period_s is None:
            raise VideoError("nothing was recorded")
        return RolloutRecording(
            joint_names=list(self.joint_names),
            control_period_s=float(self.control_period_s),
            base_pos=np.stack(self._base_pos),
            base_quat_wxyz=np.stack(self._base_quat),
            joint_pos=np.stack(self._joint_pos),
            robot_urdf=self.robot_urdf,
        )


def check_video_path(path: str | Path) -> Path:
    """``path`` as a :class:`Path` if its suffix is one :func:`render_video` writes.

    Raises:
        ValueError: Any other suffix.
    """
    path = Path(path)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(f"video file {path}: use a {' or '.join(VIDEO_SUFFIXES)} file name")
    return path


def joint_qpos_addresses(model: Any, joint_names: Sequence[str]) -> np.ndarray:
    """The ``qpos`` address of each named joint, matched by name (never by index).

    Raises:
        ValueError: The model's hinge/slide joints and ``joint_names`` are not the same set.
    """
    import mujoco

    moving = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    model_joints = {
        model.joint(j).name: int(model.jnt_qposadr[j]) for j in range(model.njnt) if int(model.jnt_type[j]) in moving
    }
    missing = sorted(set(model_joints) - set(joint_names))
    extra = sorted(set(joint_names) - set(model_joints))
    if missing or extra:
        raise ValueError(
            f"recorded joints do not match the description: missing {missing or 'none'}, unknown {extra or 'none'}"
        )
    return np.array([model_joints[name] for name in joint_names], dtype=np.int64)


def set_pose(model: Any, data: Any, recording: RolloutRecording, index: int, addresses: np.ndarray) -> None:
    """Pose ``data`` at sample ``index`` of ``recording`` (free base + joints) and run the kinematics."""
    import mujoco

    free = _free_joint_address(model)
    data.qpos[free : free + 3] = recording.base_pos[index]
    data.qpos[free + 3 : free + 7] = recording.base_quat_wxyz[index]
    data.qpos[addresses] = recording.joint_pos[index]
    mujoco.mj_kinematics(model, data)


def frame_indices(num_samples: int, control_period_s: float, fps: float) -> tuple[np.ndarray, float]:
    """Samples to render for about ``fps`` frames a second, and the exact rate that plays them in real time.

    Every ``k``-th control step is a frame, ``k = max(1, round(1 / (fps · dt)))``, so the video's
    rate is ``1 / (k · dt)``: 50 Hz control at 25 fps renders every second step.
    """
    stride = max(1, round(1.0 / (fps * control_period_s)))
    return np.arange(0, num_samples, stride), 1.0 / (stride * control_period_s)


@dataclass(frozen=True)
class VideoResult:
    """What :func:`render_video` wrote.

    Attributes:
        path: The video file.
        frames: Frames written.
        fps: Frame rate (1/s).
        render_s_per_frame: Mean time to pose and render one frame, without encoding (s).
        backend: The OpenGL backend (``egl``, ``osmesa``, ``glfw``, ``cgl``).
    """

    path: Path
    frames: int
    fps: float
    render_s_per_frame: float
    backend: str


def render_video(
    robot_urdf: str | Path | None,
    recording: RolloutRecording,
    out_path: str | Path,
    fps: float = DEFAULT_FPS,
    width: int = DEFAULT_WIDTH,
    height: int = DEFAULT_HEIGHT,
    progress: bool = False,
) -> VideoResult:
    """Render ``recording`` on the robot's URDF and write it as MP4 (H.264) or GIF (by suffix).

    The camera follows the base at a fixed height, distance and bearing (front-left, 20° down);
    the floor's 0.5 m checker shows the speed.

    Args:
        robot_urdf: The robot's generated URDF; ``None``: ``recording.robot_urdf``.
        recording: The rollout.
        out_path: ``.mp4`` or ``.gif`` file (written atomically).
        fps: Target frame rate (1/s); see :func:`frame_indices`.
        width: Frame width (pixels, even for MP4).
        height: Frame height (pixels, even for MP4).
        progress: Show a progress bar.

    Raises:
        RenderUnavailable: No OpenGL backend could be started.
        ValueError: Bad path, size, or joints that do not match the URDF.
    """
    import mujoco
    from tqdm import tqdm

    out_path = check_video_path(out_path)
    robot_urdf = robot_urdf if robot_urdf is not None else recording.robot_urdf
    if robot_urdf is None or not Path(robot_urdf).is_file():
        raise ValueError(f"robot description not found: {robot_urdf}")
    if width < 2 or height < 2 or (out_path.suffix.lower() == ".mp4" and (width % 2 or height % 2)):
        raise ValueError(f"frame size {width}x{height}: use even sizes of at least 2 pixels")
    model = build_scene(robot_urdf, width, height)
    data = mujoco.MjData(model)
    addresses = joint_qpos_addresses(model, recording.joint_names)
    indices, video_fps = frame_indices(len(recording), recording.control_period_s, fps)
    camera = _tracking_camera(model, recording)
    render_times: list[float] = []
    with OffscreenRenderer(model, width, height) as renderer:

        def frames() -> Iterator[np.ndarray]:
            for index in tqdm(indices, desc="video", unit="frame", disable=not progress, mininterval=2.0):
                start = time.perf_counter()
                set_pose(model, data, recording, int(index), addresses)
                camera.lookat[:2] = recording.base_pos[index, :2]
                image = renderer.render(data, camera)
                render_times.append(time.perf_counter() - start)
                yield image

        _encode(frames(), out_path, video_fps, width, height)
        backend = renderer.backend
    return VideoResult(out_path, len(render_times), video_fps, float(np.mean(render_times)), backend)


#: How :func:`save_rollout_video`'s line starts when there is no video.
NOT_WRITTEN = "video: not written"


def save_rollout_video(recorder: RolloutRecorder, out_path: str | Path, progress: bool = True, **kwargs: Any) -> str:
    """Render a recorder's rollout and return one line for the terminal; a failure is that line, not an error.

    The rollout's own results are written before this is called, so a machine without OpenGL loses
    only the video.
    """
    try:
        result = render_video(None, recorder.recording(), out_path, progress=progress, **kwargs)
    except (VideoError, RenderUnavailable, ValueError, OSError) as exc:
        return f"{NOT_WRITTEN} ({' '.join(str(exc).split())})"  # one line, whatever the GL library said
    return (
        f"video: {result.path} ({result.frames} frames at {result.fps:g} fps, "
        f"{result.render_s_per_frame:.3f} s/frame to render, {result.backend})"
    )


def _tracking_camera(model: Any, recording: RolloutRecording) -> Any:
    """A free camera whose look-at point :func:`render_video` moves with the base; fixed height and bearing."""
    import mujoco

    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    # The base height's median keeps the view steady through bounces and the odd fall.
    camera.lookat[2] = float(np.median(recording.base_pos[:, 2])) * 0.7
    camera.distance = 1.8 * float(model.stat.extent)
    camera.azimuth = 135.0
    camera.elevation = -20.0
    return camera


def _free_joint_address(model: Any) -> int:
    import mujoco

    free = [j for j in range(model.njnt) if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)]
    return int(model.jnt_qposadr[free[0]])


def _encode(frames: Iterator[np.ndarray], path: Path, fps: float, width: int, height: int) -> None:
    """Write frames as H.264 MP4 (imageio-ffmpeg) or GIF (Pillow), into a temp file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    try:
        if path.suffix.lower() == ".gif":
            _write_gif(frames, tmp, fps)
        else:
            _write_mp4(frames, tmp, fps)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _write_mp4(frames: Iterator[np.ndarray], path: Path, fps: float) -> None:
    import imageio.v2 as imageio

    # yuv420p is what every player decodes; macro_block_size=1 keeps the frame size as given.
    writer = imageio.get_writer(
        path, format="FFMPEG", fps=fps, codec="libx264", pixelformat="yuv420p", quality=7, macro_block_size=1
    )
    try:
        for frame in frames:
            writer.append_data(frame)
    finally:
        writer.close()


def _write_gif(frames: Iterator[np.ndarray], path: Path, fps: float) -> None:
    from PIL import Image

    images = (Image.fromarray(frame).quantize(colors=256, method=Image.Quantize.MEDIANCUT) for frame in frames)
    first = next(images, None)
    if first is None:
        raise VideoError("no frames to write")
    # GIF stores delays in 1/100 s: 25 fps is exact, other rates round.
    first.save(path, format="GIF", save_all=True, append_images=images, duration=1000.0 / fps, loop=0)


def _to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.array(value, dtype=np.float64)  # a copy: simulator buffers are reused every step

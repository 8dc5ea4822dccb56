"""``linkage-lab bench video``: seconds per frame of the rollout video renderer at several frame sizes."""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from linkage_lab.evaluation.offscreen import build_scene
from linkage_lab.evaluation.video import RolloutRecorder, RolloutRecording, render_video
from linkage_lab.robots.assets import ensure_assets


def synthetic_recording(robot_urdf: Path, frames: int, control_period_s: float = 0.04) -> RolloutRecording:
    """``frames`` samples of the robot walking forward at 0.4 m/s with every joint swinging ±0.3 rad.

    With one sample per video frame at 25 fps (``control_period_s`` 0.04 s), every sample is rendered.
    """
    import mujoco

    model = build_scene(robot_urdf, 16, 16)
    hinge = int(mujoco.mjtJoint.mjJNT_HINGE)
    names = [model.joint(j).name for j in range(model.njnt) if int(model.jnt_type[j]) == hinge]
    recorder = RolloutRecorder(joint_names=names, control_period_s=control_period_s, robot_urdf=Path(robot_urdf))
    height_m = 0.5 * float(model.stat.extent)
    for k in range(frames):
        t = k * control_period_s
        joints = [0.3 * math.sin(2.0 * math.pi * (1.5 * t + i / len(names))) for i in range(len(names))]
        recorder.add([0.4 * t, 0.0, height_m], [0.0, 0.0, 0.0, 1.0], joints)
    return recorder.recording()


def run_video_bench(robot: str, frames: int = 100, sizes: Sequence[tuple[int, int]] = ((320, 240), (640, 480))) -> list:
    """Render ``frames`` frames of ``robot`` to MP4 at each size; one row per size.

    Each row has ``render_s_per_frame`` (pose, render, read back) and ``total_s_per_frame`` (scene
    build, rendering and H.264 encoding, over the frames).

    Raises:
        RenderUnavailable: No OpenGL backend.
    """

    urdf = Path(ensure_assets(robot)).with_suffix(".urdf")
    recording = synthetic_recording(urdf, frames)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for width, height in sizes:
            start = time.perf_counter()
            result = render_video(urdf, recording, Path(tmp) / f"{width}x{height}.mp4", 25.0, width, height)
            total = time.perf_counter() - start
            rows.append(
                {
                    "robot": robot,
                    "width": width,
                    "height": height,
                    "frames": result.frames,
                    "render_s_per_frame": result.render_s_per_frame,
                    "total_s_per_frame": total / result.frames,
                    "mp4_bytes": result.path.stat().st_size,
                    "backend": result.backend,
                }
            )
    return rows


def format_rows(rows: list[dict]) -> str:
    """A table for people."""
    lines = [f"{'robot':8s} {'size':>9s} {'frames':>6s} {'render s/frame':>15s} {'with encoding':>14s} {'MP4 KB':>7s}"]
    for row in rows:
        lines.append(
            f"{row['robot']:8s} {row['width']:>4d}x{row['height']:<4d} {row['frames']:6d} "
            f"{row['render_s_per_frame']:15.3f} {row['total_s_per_frame']:14.3f} {row['mp4_bytes'] / 1024:7.0f}"
        )
    return "\n".join(lines) + f"\nOpenGL backend: {rows[0]['backend']}"

"""The ``--video FILE`` option that ``eval`` and ``sprint`` share (not a command of its own)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO


def add_video_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--video FILE``; a file name other than ``.mp4``/``.gif`` is a usage error before anything runs."""
    parser.add_argument(
        "--video",
        type=_video_file,
        default=None,
        metavar="FILE",
        help="also render env 0's rollout to FILE (.mp4, or .gif) on the robot's URDF with MuJoCo offscreen "
        "(MUJOCO_GL picks the OpenGL backend, default egl)",
    )


def video_recorder(path: Path | None) -> Any:
    """A :class:`~linkage_lab.evaluation.video.RolloutRecorder` when a video was asked for, else ``None``."""
    if path is None:
        return None
    from linkage_lab.evaluation.video import RolloutRecorder

    return RolloutRecorder()


def write_video(recorder: Any, path: Path | None, progress: bool = True, stream: TextIO | None = None) -> None:
    """Render the recorded rollout and print one line: where the video is, or why there is none."""
    if recorder is None or path is None:
        return
    from linkage_lab.evaluation.video import save_rollout_video

    print(save_rollout_video(recorder, path, progress=progress), file=stream or sys.stdout)


def _video_file(text: str) -> Path:
    from linkage_lab.evaluation.video import check_video_path

    try:
        return check_video_path(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc

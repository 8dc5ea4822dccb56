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
        "(MUJOCO_GL picks the OpenGL backend, default egl); an existing FILE needs --force; exit status 4 when "
        "it cannot be rendered",
    )


def video_recorder(path: Path | None) -> Any:
    """A :class:`~linkage_lab.evaluation.video.RolloutRecorder` when a video was asked for, else ``None``."""
    if path is None:
        return None
    from linkage_lab.evaluation.video import RolloutRecorder

    return RolloutRecorder()


def check_video_file(path: Path | None, force: bool = False) -> None:
    """Before the run: ``--video FILE`` may be written (a new file, or an existing one with ``--force``) in a
    folder this process can write; nothing is created but the folder.

    Raises:
        OutputDirError: A folder, an existing file without ``force``, or an unwritable place.
    """
    from linkage_lab.outputs import OutputDirError, probe_writable

    if path is None:
        return
    path = Path(path).expanduser()
    if path.is_dir():
        raise OutputDirError(f"--video {path} is a folder; give a file name")
    if (path.exists() or path.is_symlink()) and not force:
        raise OutputDirError(f"--video {path} already exists; pass --force to replace it, or give another file name")
    probe_writable(path, "--video")


def video_exit(line: str | None) -> int:
    """The exit status for a run whose video line is ``line`` (``None``: no video was asked for)."""
    from linkage_lab.evaluation.video import NOT_WRITTEN
    from linkage_lab.exit_codes import INCOMPLETE, OK

    return INCOMPLETE if line is not None and line.startswith(NOT_WRITTEN) else OK


def write_video(recorder: Any, path: Path | None, progress: bool = True, stream: TextIO | None = None) -> int:
    """Render the recorded rollout and print one line: where the video is, or why there is none.

    Returns:
        The exit status: 0, or :data:`~linkage_lab.exit_codes.INCOMPLETE` when the video could not be made.
    """
    if recorder is None or path is None:
        return 0
    from linkage_lab.evaluation.video import save_rollout_video

    line = save_rollout_video(recorder, path, progress=progress)
    print(line, file=stream or sys.stdout)
    return video_exit(line)


def _video_file(text: str) -> Path:
    from linkage_lab.evaluation.video import check_video_path

    try:
        return check_video_path(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc

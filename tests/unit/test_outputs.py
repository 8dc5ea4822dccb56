"""Output folders of eval, export and sprint: never delete what the tool did not write, never lose a race."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from linkage_lab.outputs import (
    MANIFEST_FILE,
    OutputDirError,
    OutputWriteError,
    check_output_dir,
    read_manifest,
    staged_directory,
    write_output,
)

pytestmark = pytest.mark.unit


def _user_folder(path: Path) -> Path:
    """A folder of the user's: a note and a sub-folder with a file."""
    (path / "sub").mkdir(parents=True)
    (path / "notes.txt").write_text("mine")
    (path / "sub" / "data.csv").write_text("1,2")
    return path


def _assert_untouched(path: Path) -> None:
    assert (path / "notes.txt").read_text() == "mine"
    assert (path / "sub" / "data.csv").read_text() == "1,2"


def _write(name: str, text: str):
    def writer(folder: Path) -> Path:
        (folder / name).write_text(text)
        return folder

    return writer


@pytest.mark.parametrize("force", [False, True])
def test_a_foreign_folder_is_refused_and_kept(tmp_path, force):
    folder = _user_folder(tmp_path / "mine")
    with pytest.raises(OutputDirError, match=f"output folder {folder} is not empty and is not a linkage-lab output"):
        check_output_dir(folder, "export", force=force)
    with pytest.raises(OutputDirError), staged_directory(folder, "export", force=force) as staging:
        (staging / "policy.onnx").write_text("x")
    _assert_untouched(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # no staging folder left behind


def test_a_previous_output_needs_force_and_is_replaced_whole(tmp_path):
    target = tmp_path / "race"
    write_output(target, "sprint", _write("metrics.json", "1"))
    manifest = read_manifest(target)
    assert manifest["command"] == "sprint" and manifest["files"] == ["metrics.json"]
    with pytest.raises(OutputDirError, match="holds a previous sprint output; pass --force"):
        check_output_dir(target, "sprint")
    with pytest.raises(OutputWriteError):
        write_output(target, "sprint", _write("metrics.json", "2"))
    assert (target / "metrics.json").read_text() == "1"
    write_output(target, "sprint", _write("other.json", "3"), force=True)
    assert sorted(p.name for p in target.iterdir()) == sorted([MANIFEST_FILE, "other.json"])


def test_force_never_replaces_files_the_previous_output_did_not_write(tmp_path):
    target = tmp_path / "bundle"
    with staged_directory(target, "export") as staging:
        (staging / "policy.onnx").write_text("x")
        (staging / "ankle_bridge").mkdir()
        (staging / "ankle_bridge" / "a.onnx").write_text("y")
    (target / "ankle_bridge" / "my_notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match=r"files the previous export did not write \(ankle_bridge/my_notes.txt\)"):
        check_output_dir(target, "export", force=True)
    assert (target / "ankle_bridge" / "my_notes.txt").read_text() == "mine"


def test_another_commands_output_is_refused_even_with_force(tmp_path):
    target = tmp_path / "out"
    write_output(target, "eval", _write("eval.json", "{}"))
    with pytest.raises(OutputDirError, match="holds a linkage-lab eval output, not a sprint output"):
        check_output_dir(target, "sprint", force=True)


def test_an_empty_folder_is_used(tmp_path):
    target = tmp_path / "empty"
    target.mkdir()
    write_output(target, "eval", _write("eval.json", "{}"))
    assert (target / "eval.json").read_text() == "{}"


@pytest.mark.parametrize(
    "make_path, message",
    [
        (lambda tmp: (tmp / "file.txt", (tmp / "file.txt").write_text("x"))[0], "exists and is not a folder"),
        (lambda tmp: Path("/proc/linkage-lab-out"), "cannot write output folder /proc/linkage-lab-out"),
        (lambda tmp: (tmp / "f", (tmp / "f").write_text("x"))[0] / "out", "cannot write output folder"),
    ],
)
def test_files_and_unwritable_places_are_refused(tmp_path, make_path, message):
    path = make_path(tmp_path)
    with pytest.raises(OutputDirError, match=message):
        check_output_dir(path, "sprint")


def test_a_failed_write_falls_back_to_a_temp_folder(tmp_path):
    folder = _user_folder(tmp_path / "mine")
    with pytest.raises(OutputWriteError, match="it was written to .* instead") as info:
        write_output(folder, "sprint", _write("metrics.json", '{"time": 12.5}'))
    fallback = info.value.fallback
    try:
        assert (fallback / "metrics.json").read_text() == '{"time": 12.5}'
        assert read_manifest(fallback)["command"] == "sprint"
        _assert_untouched(folder)
    finally:
        shutil.rmtree(fallback)


def test_a_finished_race_is_never_lost(tmp_path):
    from linkage_lab.sprint.runner import RaceRecord, write_race

    metrics = {
        "ended_reason": "finished",
        "duration_s": 19.6,
        "distance_m": 10.0,
        "average_speed_mps": 0.51,
        "time": 19.6,
    }
    record = RaceRecord(metrics, [(0.0, 0.0), (10.0, 0.1)], {"policy": "scripted", "ankle": "box"})
    folder = _user_folder(tmp_path / "mine")
    with pytest.raises(OutputWriteError) as info:
        write_race(record, folder)
    try:
        assert json.loads((info.value.fallback / "metrics.json").read_text()) == metrics
        assert (info.value.fallback / "path.png").is_file()
        _assert_untouched(folder)
    finally:
        shutil.rmtree(info.value.fallback)
    files = write_race(record, tmp_path / "race")
    assert json.loads(files["metrics.json"].read_text()) == metrics


def test_a_link_to_a_previous_output_is_replaced_without_touching_other_folders(tmp_path):
    real = tmp_path / "real"
    write_output(real, "eval", _write("eval.json", "1"))
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    write_output(link, "eval", _write("eval.json", "2"), force=True)
    assert not link.is_symlink() and (link / "eval.json").read_text() == "2"
    assert (real / "eval.json").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]

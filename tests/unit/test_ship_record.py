"""``linkage-lab ship`` records the commit a run was trained at, read from the run's own git record."""

from __future__ import annotations

import pytest

from linkage_lab.cli.ship import run_commit

pytestmark = pytest.mark.unit

HASH = "0123456789abcdef0123456789abcdef01234567"


def _record(tmp_path, status: str):
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "main.diff").write_text(f"--- git commit ---\n{HASH}\n\n\n--- git status ---\n{status}\n")
    return tmp_path


def test_a_clean_run_records_its_commit(tmp_path):
    assert run_commit(_record(tmp_path, "On branch main\nnothing to commit, working tree clean")) == HASH


@pytest.mark.parametrize("change", ["Changes not staged for commit:", "Changes to be committed:"])
def test_changed_tracked_files_mark_it_dirty(tmp_path, change):
    status = f"On branch main\n{change}\n\tmodified:   README.md"
    assert run_commit(_record(tmp_path, status)) == f"{HASH}-dirty"


def test_untracked_files_alone_leave_it_clean(tmp_path):
    status = "On branch main\nUntracked files:\n\tnotes.txt\nnothing added to commit but untracked files present"
    assert run_commit(_record(tmp_path, status)) == HASH


def test_no_record_or_a_garbled_one_gives_none(tmp_path):
    assert run_commit(tmp_path) is None
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "main.diff").write_text("not a record")
    assert run_commit(tmp_path) is None

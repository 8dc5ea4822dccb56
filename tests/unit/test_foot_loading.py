"""The duty-factor comparison (linkage_lab_experiments.analysis.foot_loading): read, tabulate, plot, refuse."""

from __future__ import annotations

import json

import pytest

from linkage_lab_experiments.analysis.foot_loading import compare, format_table, main, plot

pytestmark = pytest.mark.unit


def _report(path, duties, flight=0.1, alternation=0.6):
    feet = [{"body": f"{leg}_foot", "touchdowns_per_s": 2.0, "duty_factor": d} for leg, d in zip("ab", duties)]
    path.write_text(json.dumps({"footfalls": {"feet": feet, "flight_share": flight, "alternation": alternation}}))
    return path


def test_the_feet_are_compared_as_the_reports_record_them(tmp_path):
    document = compare(
        {"three legs": _report(tmp_path / "x.json", (0.7, 0.0005)), "trot": _report(tmp_path / "y.json", (0.5, 0.45))}
    )
    assert list(document["rows"]) == ["three legs", "trot"]
    assert document["rows"]["three legs"]["duty_factor"] == {"a_foot": 0.7, "b_foot": 0.0005}
    table = format_table(document).splitlines()
    assert table[1].split()[:4] == ["three", "legs", "0.700", "0.001"] and table[2].split()[1:3] == ["0.500", "0.450"]
    plot(document, tmp_path / "f.png", 0.2)
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_a_report_without_feet_or_a_bad_argument_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "none.json").write_text(json.dumps({"footfalls": None}))
    with pytest.raises(SystemExit) as stop:
        main([f"x={tmp_path / 'none.json'}", "--out", str(tmp_path / "out")])
    assert stop.value.code == 2 and "no per-foot duty factors" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as stop:
        main(["no-label.json"])
    assert stop.value.code == 2 and "expected LABEL=REPORT.json" in capsys.readouterr().err

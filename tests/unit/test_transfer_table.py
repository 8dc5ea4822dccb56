"""The transfer table's config and its Markdown/PNG from a report (the runs themselves are a command)."""

from __future__ import annotations

import json

import pytest
import torch

from linkage_lab.config import ConfigError
from linkage_lab.evaluation.policy_check import checkpoint_sizes
from linkage_lab.paths import REPO_ROOT
from linkage_lab_experiments.transfer import DEFAULT_CONFIG, Row, load_rows, merge_rows
from linkage_lab_experiments.transfer_report import markdown_table, plot

pytestmark = pytest.mark.unit


def _case(command, isaac_rms, sim_rms, saturated):
    return {
        "command": list(command),
        "isaac_lab": {
            "mean_forward_speed_mps": command[0],
            "lin_vel_xy_rms_mps": isaac_rms,
            "yaw_rate_rms_radps": 0.05,
            "falls": 0,
            "episodes": 8,
        },
        "sim2sim": {
            "mean_forward_speed_mps": 0.9 * command[0],
            "lin_vel_xy_rms_mps": sim_rms,
            "yaw_rate_rms_radps": 0.02,
            "falls": 1,
            "simulated_s": 20.0,
            "mean_saturated_fraction": saturated / 4,
            "worst_saturated_motor": "rr_ankle",
            "worst_saturated_fraction": saturated,
            "peak_torque_ratio": 1.0,
        },
    }


def test_shipped_config_names_every_linkage_model():
    rows = load_rows(DEFAULT_CONFIG)
    overrides = {override for row in rows for override in row.overrides}
    assert {"presets=kin_only", "presets=s3n_full", "presets=box"} <= overrides
    # Every checkpoint the table names is in the repo, and the Marvin rows run the action term they were
    # trained on (a gait that does not turn, one residual scale), not the present recipe's.
    for row in rows:
        assert row.checkpoint == "pretrained" or (REPO_ROOT / row.checkpoint).is_file(), row.name
    marvin = [row for row in rows if row.task == "LinkageLab-Velocity-Flat-Marvin-Residual"]
    assert [row.checkpoint for row in marvin].count("pretrained") == 1
    # The policies trained on the action term before the gait turned (1339 and the box control); 1750 trained
    # on the present one.
    old_term = [row for row in marvin if row.name in ("marvin_diamond", "marvin_box")]
    assert len(old_term) == 2
    present = [row for row in marvin if row not in old_term]
    assert {"marvin_shipped", "marvin_residual_1750", "marvin_diamond_seed43"} <= {row.name for row in present}
    for row in old_term:
        assert {"env.actions.joint_pos.turn_per_yaw_rate_s=0.0", "env.actions.joint_pos.scale_by_joint={}"} <= set(
            row.overrides
        )
    # The shipped actor observes its previous action; a row whose checkpoint has fewer inputs says so by dropping
    # the term, one action vector, and nothing else of the present recipe.
    shipped_inputs, actions = _sizes(REPO_ROOT / "policies" / "LinkageLab-Velocity-Flat-Marvin-Residual" / "model.pt")
    drop = "env.observations.policy.previous_action=null"
    for row in marvin:
        if row.checkpoint == "pretrained":
            assert not row.overrides
            continue
        inputs, _ = _sizes(REPO_ROOT / row.checkpoint)
        assert (drop in row.overrides) == (inputs == shipped_inputs - actions), (row.name, inputs, shipped_inputs)
        assert inputs in (shipped_inputs, shipped_inputs - actions), row.name
    for row in present:
        # The present action term: nothing but the dropped input and the box row's ankle model.
        assert not set(row.overrides) - {drop, "presets=box"}, row.name


def _sizes(checkpoint) -> tuple[int | None, int | None]:
    """(observation size, action size) of a saved rsl-rl actor."""
    return checkpoint_sizes(torch.load(checkpoint, map_location="cpu", weights_only=False))


def test_limit_rows_share_one_recipe_and_differ_in_the_linkage_model():
    rows = load_rows(DEFAULT_CONFIG)
    limit = [r for r in rows if r.task == "LinkageLab-Velocity-Flat-Limit" and r.checkpoint != "pretrained"]
    records = [json.loads((REPO_ROOT / row.checkpoint).with_name("train.json").read_text()) for row in limit]
    assert len(limit) == 3
    assert {(r["iterations"], r["seed"], r["num_envs"]) for r in records} == {(600, 42, 256)}
    models = [next((o for o in r["training_command"].split() if o.startswith("presets=")), None) for r in records]
    assert sorted(models, key=str) == [None, "presets=kin_only", "presets=s3n_full"]


def test_bad_config_is_a_clear_error(tmp_path):
    path = tmp_path / "transfer.yaml"
    path.write_text("rows:\n  - name: a\n")
    with pytest.raises(ConfigError, match=r"rows\[0\] needs name, task and checkpoint"):
        load_rows(path)
    path.write_text("rows: []\n")
    with pytest.raises(ConfigError, match="lists no rows"):
        load_rows(path)


def test_table_and_plot_from_a_report(tmp_path):
    doc = {
        "rows": [
            {"name": "a", "status": "ok", "cases": [_case((0.3, 0.0), 0.058, 0.046, 0.97)]},
            {"name": "b", "status": "not trained", "note": "later", "cases": []},
        ]
    }
    table = markdown_table(doc)
    assert "| a | +0.3, +0.0 | 0.300 → 0.270 | 0.058 → 0.046 |" in table
    assert "0/8 → 1/1" in table and "24.2% / 97% (rr_ankle)" in table
    assert "| b | – | not trained: later |" in table
    path = plot(doc, tmp_path / "transfer.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _race(success, distance, time, offset, reason):
    return {
        "success": success,
        "time": time,
        "distance_m": distance,
        "average_speed_mps": distance / 20.0,
        "max_lateral_offset_m": offset,
        "ended_reason": reason,
    }


def test_sprint_table_from_a_report():
    sprint = {
        "ankle": "diamond",
        "isaac_lab": _race(True, 10.0, 19.72, 0.204, "finished"),
        "sim2sim": _race(False, 2.43, None, 0.503, "left_track"),
    }
    doc = {"rows": [{"name": "m", "status": "ok", "cases": [], "sprint": sprint}]}
    table = markdown_table(doc)
    assert "| m | diamond | finished in 19.72 s | left_track at 2.43 m | 0.20 → 0.50 |" in table
    # Rows without a sprint add no sprint table.
    assert "sprint" not in markdown_table({"rows": [{"name": "a", "status": "ok", "cases": []}]})


def test_shipped_config_races_the_marvin_rows_with_their_training_ankles():
    for row in load_rows(DEFAULT_CONFIG):
        if "Marvin" in row.task:
            ankle = "box" if "presets=box" in row.overrides else "diamond"
            assert row.sprint_ankle == ankle, row.name
        else:
            assert row.sprint_ankle is None, row.name


def test_rerun_rows_replace_their_entries_and_keep_the_others_in_config_order():
    rows = [Row(name=n, task="T", checkpoint="pretrained") for n in ("a", "b", "c")]
    previous = {"rows": [{"name": "a", "v": 1}, {"name": "b", "v": 1}, {"name": "c", "v": 1}]}
    merged = merge_rows(rows, [{"name": "b", "v": 2}], previous)
    assert [(e["name"], e["v"]) for e in merged] == [("a", 1), ("b", 2), ("c", 1)]
    # Without a previous table only the rows run are there; a row dropped from the config is dropped.
    assert merge_rows(rows, [{"name": "c", "v": 2}], None) == [{"name": "c", "v": 2}]
    assert merge_rows(rows[:1], [], previous) == [{"name": "a", "v": 1}]


def test_a_rows_race_runs_its_action_overrides_and_takes_the_ankle_from_the_row(tmp_path, monkeypatch):
    from linkage_lab.sim2sim import runner
    from linkage_lab_experiments import transfer

    calls = []

    def fake_run(argv, log):
        calls.append(list(argv))
        out = tmp_path / "row" / "isaac_sprint"
        out.mkdir(parents=True, exist_ok=True)
        (out / "metrics.json").write_text(json.dumps({"ended_reason": "finished", "time": 20.0}))

    raced = []
    monkeypatch.setattr(transfer, "_run", fake_run)
    monkeypatch.setattr(
        runner,
        "run_sim2sim",
        lambda bundle, *args, **kwargs: raced.append(bundle) or {"sprint": {"ended_reason": "fell"}},
    )
    row = Row(
        name="row",
        task="LinkageLab-Velocity-Flat-Marvin-Residual",
        checkpoint="c.pt",
        overrides=("presets=box", "env.actions.joint_pos.turn_per_yaw_rate_s=0.0"),
        sprint_ankle="box",
    )
    result = transfer._sprint_row(row, tmp_path / "row", tmp_path / "bundle", tmp_path / "log", isaac=True)
    # The residual race steps the gait at 1.2 Hz: the closed chain races a bundle exported at that cadence.
    race_bundle = tmp_path / "row" / "race_bundle"
    assert calls == [
        ["sprint", "--checkpoint", "c.pt", "--ankle", "box", "--out", str(tmp_path / "row" / "isaac_sprint"), "--force"]
        + ["env.actions.joint_pos.turn_per_yaw_rate_s=0.0"],
        ["export", "--task", row.task, "--checkpoint", "c.pt", "--out", str(race_bundle), "--force", *row.overrides]
        + ["env.actions.joint_pos.frequency_hz=1.2"],
    ]
    assert raced == [race_bundle]
    assert result["isaac_lab"]["ended_reason"] == "finished" and result["sim2sim"]["ended_reason"] == "fell"


def _gap_row(condition, command, lin, yaw, falls, passed):
    return {
        "condition": condition,
        "command": {"lin_vel_x_mps": command[0], "ang_vel_z_radps": command[1]},
        "runs": 2,
        "falls": falls,
        "lin_vel_xy_rms_mps": lin,
        "yaw_rate_rms_radps": yaw,
        "passed": passed,
    }


def test_stressed_cases_take_each_commands_worst_condition():
    from linkage_lab_experiments.transfer import stressed_cases

    document = {
        "rows": [
            _gap_row("nominal", (0.3, 0.0), 0.05, 0.04, 0, True),
            _gap_row("delay_40ms", (0.3, 0.0), 0.09, 0.03, 1, False),
            _gap_row("friction_0.5", (0.3, 0.0), 0.07, 0.06, 0, True),
            _gap_row("nominal", (0.0, 0.3), 0.02, 0.11, 0, True),
            _gap_row("delay_40ms", (0.0, 0.3), None, 0.15, 2, False),
        ]
    }
    cases = stressed_cases(document)
    assert set(cases) == {(0.3, 0.0), (0.0, 0.3)}
    walk = cases[(0.3, 0.0)]
    assert (walk["runs"], walk["falls"], walk["conditions"], walk["conditions_passed"]) == (6, 1, 3, 2)
    assert (walk["worst_lin_vel_xy_rms_mps"], walk["worst_lin_vel_xy_rms_mps_condition"]) == (0.09, "delay_40ms")
    assert (walk["worst_yaw_rate_rms_radps"], walk["worst_yaw_rate_rms_radps_condition"]) == (0.06, "friction_0.5")
    turn = cases[(0.0, 0.3)]
    # A condition without a figure (None) is not a worst value.
    assert (turn["worst_lin_vel_xy_rms_mps"], turn["worst_lin_vel_xy_rms_mps_condition"]) == (0.02, "nominal")
    assert (turn["falls"], turn["conditions_passed"]) == (2, 1)


def test_table_and_plot_show_the_stress_set_where_a_row_ran_it(tmp_path):
    from linkage_lab_experiments.transfer import stressed_cases

    case = _case((0.3, 0.0), 0.058, 0.046, 0.97)
    case["sim2sim_stress"] = stressed_cases(
        {
            "rows": [
                _gap_row("nominal", (0.3, 0.0), 0.05, 0.04, 0, True),
                _gap_row("delay_40ms", (0.3, 0.0), 0.09, 0.03, 1, False),
            ]
        }
    )[(0.3, 0.0)]
    doc = {
        "rows": [
            {"name": "a", "status": "ok", "cases": [case]},
            {"name": "b", "status": "ok", "cases": [_case((0.5, 0.0), 0.05, 0.06, 0.5)]},
        ]
    }
    table = markdown_table(doc)
    assert "stress set: falls / runs" in table.splitlines()[0]
    assert "| 1/4, 0.090 (delay_40ms), 0.040 (nominal), 1/2 |" in table
    assert table.splitlines()[3].endswith("| not run |")
    # Every line of the table has the header's column count.
    assert len({line.count("|") for line in table.strip().splitlines()}) == 1
    assert plot(doc, tmp_path / "transfer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_stressed_row_attaches_the_reality_gap_to_its_commands(tmp_path, monkeypatch):
    from linkage_lab.sim2sim import reality_gap, runner
    from linkage_lab_experiments import transfer

    def fake_run(argv, log):
        if argv[0] == "eval":
            out = tmp_path / "out" / "row" / "isaac"
            out.mkdir(parents=True, exist_ok=True)
            command = {"lin_vel_x_mps": 0.3, "ang_vel_z_radps": 0.0}
            (out / "sweep.json").write_text(json.dumps({"cases": [{"command": command, "falls": 0, "episodes": 8}]}))

    motors = [{"name": "m", "saturated_fraction": 0.1, "peak_ratio": 0.5}]
    report = {
        "motor_torques": {"motors": motors},
        "tracking": {"mean_forward_speed_mps": 0.3, "lin_vel_xy_rms_mps": 0.04, "yaw_rate_rms_radps": 0.02},
        "falls": 0,
        "simulated_s": 20.0,
    }
    gap = {"task": "T", "targets": None, "conditions": [], "summary": {"runs": 2, "falls": 0, "failed_rows": 0}}
    gap["rows"] = [_gap_row("nominal", (0.3, 0.0), 0.05, 0.04, 0, True)]
    written = []
    monkeypatch.setattr(transfer, "_run", fake_run)
    monkeypatch.setattr(runner, "run_sim2sim", lambda *args, **kwargs: report)
    monkeypatch.setattr(reality_gap, "run_reality_gap", lambda bundle, **kwargs: gap)
    monkeypatch.setattr(reality_gap, "write_reality_gap", lambda folder, document: written.append(folder))
    row = Row(name="row", task="LinkageLab-Velocity-Flat-Limit", checkpoint="pretrained")
    entry = transfer.run_row(row, tmp_path / "out", stress=True)
    assert written == [tmp_path / "out" / "row" / "reality_gap"]
    assert entry["stress_set"] == "row/reality_gap/reality_gap.json"
    assert entry["cases"][0]["sim2sim_stress"]["worst_lin_vel_xy_rms_mps"] == 0.05
    # Without the stress set the row carries none.
    plain = transfer.run_row(row, tmp_path / "out")
    assert plain["stress_set"] is None and "sim2sim_stress" not in plain["cases"][0]
    # Reused: the reality gap the row's folder holds is read, not run.
    (tmp_path / "out" / "row" / "reality_gap").mkdir(parents=True)
    gap["rows"][0]["lin_vel_xy_rms_mps"] = 0.07
    (tmp_path / "out" / "row" / "reality_gap" / "reality_gap.json").write_text(json.dumps(gap))
    monkeypatch.setattr(reality_gap, "run_reality_gap", lambda bundle, **kwargs: pytest.fail("ran again"))
    reused = transfer.run_row(row, tmp_path / "out", stress=True, reuse_stress=True)
    assert reused["cases"][0]["sim2sim_stress"]["worst_lin_vel_xy_rms_mps"] == 0.07


def test_a_missed_sweep_is_a_measurement_and_a_crash_is_an_error(tmp_path, monkeypatch):
    import subprocess

    from linkage_lab_experiments import transfer

    log = tmp_path / "commands.log"
    for code in (0, 3):
        monkeypatch.setattr(
            subprocess, "run", lambda *args, code=code, **kwargs: subprocess.CompletedProcess(args, code)
        )
        transfer._run(["eval", "--sweep"], log)
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(args, 1))
    with pytest.raises(RuntimeError, match=r"linkage-lab eval failed \(exit 1\)"):
        transfer._run(["eval", "--sweep"], log)
    assert log.read_text().count("$ linkage-lab eval --sweep") == 3


def test_every_finished_row_is_written_before_a_later_row_fails(tmp_path, monkeypatch):
    from linkage_lab_experiments import transfer

    config = tmp_path / "transfer.yaml"
    config.write_text(
        "rows:\n  - {name: a, task: T, checkpoint: pretrained}\n  - {name: b, task: T, checkpoint: pretrained}\n"
    )

    def fake_row(row, *args, **kwargs):
        if row.name == "b":
            raise RuntimeError("b crashed")
        return {"name": row.name, "status": "ok", "cases": [_case((0.3, 0.0), 0.05, 0.04, 0.1)]}

    monkeypatch.setattr(transfer, "run_row", fake_row)
    with pytest.raises(RuntimeError, match="b crashed"):
        transfer.main(["--config", str(config), "--out", str(tmp_path / "out")])
    written = json.loads((tmp_path / "out" / "transfer.json").read_text())
    assert [row["name"] for row in written["rows"]] == ["a"]
    assert "| a | +0.3, +0.0 |" in (tmp_path / "out" / "transfer.md").read_text()
    with pytest.raises(SystemExit):
        transfer.main(["--config", str(config), "--out", str(tmp_path / "out"), "--rows"])

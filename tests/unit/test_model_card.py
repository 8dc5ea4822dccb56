"""A shipped policy's MODEL_CARD.md: generated from the records beside it, numbers and verdicts as recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from linkage_lab.evaluation.sweep import KnownMiss, task_acceptance
from linkage_lab.export.model_card import MODEL_CARD_FILE, ModelCardError, main, model_card, read_records
from linkage_lab.export.model_card import write_model_card as write_card
from linkage_lab.tasks.observability import ROBOT_SOURCES

pytestmark = pytest.mark.unit

LIMIT = "LinkageLab-Velocity-Flat-Limit"
REPO_ROOT = Path(__file__).resolve().parents[2]


def check(value: float, limit: float, kind: str | None = None) -> dict:
    ok = value >= limit if kind == "at least" else value <= limit
    return {"value": value, "limit": limit, "ok": ok, **({"kind": kind} if kind else {})}


def case(vx: float, wz: float, speed: float, yaw_rate: float, checks: dict) -> dict:
    return {
        "command": {"lin_vel_x_mps": vx, "ang_vel_z_radps": wz},
        "mean_forward_speed_mps": speed,
        "mean_yaw_rate_radps": yaw_rate,
        "checks": checks,
    }


def sweep(cases: list[dict], **extra) -> dict:
    failed = [key for row in cases for key, c in row["checks"].items() if not c["ok"]]
    return {
        "task": LIMIT,
        "episodes_per_case": 8,
        "num_envs": 8,
        "targets": {"lin_vel_rms_mps": 0.06, "yaw_rate_rms_radps": None, "max_falls": 0},
        "cases": cases,
        "summary": {"passed": not failed, "failed_checks": failed},
        **extra,
    }


@pytest.fixture
def policy(tmp_path) -> Path:
    """A policy folder with a training record, both sweeps and a bundle, but no eval.json or reality_gap.json."""
    folder = tmp_path / LIMIT
    (folder / "bundle").mkdir(parents=True)
    train = {
        "task": LIMIT,
        "source_run": "2026-11-30_07-08-09",
        "source_checkpoint": "model_449.pt",
        "iterations": 450,
        "training_command": f"linkage-lab train --task {LIMIT} --num-envs 64",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "wall_time_s": 1234.0,
        "env_steps_per_s": 987.0,
        "num_envs": 64,
        "workers": 2,
        "device": "cpu",
        "seed": 7,
        "fine_tuned_from": {"run": "2026-11-29_01-02-03", "iterations": 300},
    }
    standing = case(0.0, 0.0, 0.0123, -0.00456, {"falls": check(0, 0), "lin_vel_xy_rms_mps": check(0.0412, 0.06)})
    walking = case(0.5, 0.0, 0.545, 0.0211, {"falls": check(0, 0), "lin_vel_xy_rms_mps": check(0.0731, 0.06)})
    chain = case(0.3, 0.0, 0.278, 0.0189, {"falls": check(0, 0), "lin_vel_xy_rms_mps": check(0.0555, 0.08)})
    metadata = {
        "task": LIMIT,
        "robot": "limit",
        "control_period_s": 0.02,
        "observation_size": 9,
        "joint_names": ["a", "b", "c"],
        "action_target": "q* = offset + scale * action (rad)",
        "observation_layout": [
            {"name": "base_ang_vel", "size": 3, "start": 0, "function": "isaaclab.envs.mdp.base_ang_vel"},
            {"name": "joint_pos", "size": 3, "start": 3, "function": "isaaclab.envs.mdp.joint_pos_rel"},
            {"name": "actions", "size": 3, "start": 6, "function": "isaaclab.envs.mdp.last_action"},
        ],
    }
    for name, data in {
        "train.json": train,
        "sweep.json": sweep([standing, walking]),
        "closed_chain_sweep.json": sweep([chain], num_envs=1, episodes_per_case=4, duration_s=20.0),
        "bundle/metadata.json": metadata,
    }.items():
        (folder / name).write_text(json.dumps(data))
    return folder


def written_card(folder: Path, misses=None) -> str:
    path = write_card(folder, misses)
    assert path == folder / MODEL_CARD_FILE
    return path.read_text()


def test_each_check_is_met_or_missed_with_its_recorded_numbers(policy):
    card = written_card(policy, misses=())
    isaac_lab = card[card.index("## Acceptance in Isaac Lab") : card.index("## Acceptance on the closed chain")]
    assert "| +0.00, +0.00 | 0.0123 | -0.00456 | lin_vel_xy_rms_mps | 0.0412 | ≤ 0.06 | met |" in isaac_lab
    assert "| +0.50, +0.00 | 0.545 | 0.0211 | lin_vel_xy_rms_mps | 0.0731 | ≤ 0.06 | **missed** |" in isaac_lab
    assert "| +0.50, +0.00 | 0.545 | 0.0211 | falls | 0 | ≤ 0 | met |" in isaac_lab
    assert "Verdict: **missed**." in isaac_lab
    chain = card[card.index("## Acceptance on the closed chain") : card.index("## Reality gap")]
    assert "4 episodes per command on 1 env(s), 20 s per run" in chain
    assert "| lin_vel_xy_rms_mps | 0.0555 | ≤ 0.08 | met |" in chain and "Verdict: every target met." in chain
    # A missed check that the task's acceptance does not record is called so.
    assert "`vx+0.50_wz+0.00`: lin_vel_xy_rms_mps 0.0731 against 0.06 (not a recorded known miss)" in card


def test_known_gaps_are_the_reasons_recorded_in_the_tasks_acceptance(policy):
    misses = task_acceptance(LIMIT).known_misses
    reasons = list(dict.fromkeys(miss.reason for miss in misses))
    # The sweep misses a check the task's acceptance records (its first Isaac Lab one, whichever that is).
    recorded = next(m for m in misses if m.simulator == "isaac_lab")
    vx, wz = (float(part[2:]) for part in recorded.case.split("_"))
    missed = case(vx, wz, vx, wz, {"falls": check(0, 0), recorded.check: check(0.0731, 0.06)})
    (policy / "sweep.json").write_text(json.dumps(sweep([missed])))
    card = written_card(policy)
    number = reasons.index(recorded.reason) + 1
    assert f"{recorded.check} 0.0731 against 0.06 (known gap {number})" in card
    gaps = card[card.index("`known_gaps`") :]
    assert all(f"{i}. {text}" in gaps for i, text in enumerate(reasons, start=1))
    # Given explicitly, the misses explain the same check.
    own = written_card(policy, [KnownMiss("isaac_lab", recorded.case, recorded.check, "wobbles")])
    assert "(known gap 1)" in own and "1. wobbles" in own


def test_observation_terms_and_training_record(policy):
    card = written_card(policy, misses=())
    assert "the actor reads 9 numbers" in card and "every 0.02 s (50 Hz)" in card
    assert f"| `base_ang_vel` | 3 | 0–2 | `base_ang_vel` | {ROBOT_SOURCES['base_ang_vel']} |" in card
    assert f"| `actions` | 3 | 6–8 | `last_action` | {ROBOT_SOURCES['last_action']} |" in card
    assert "It outputs 3 actions, one per joint: q* = offset + scale * action (rad)." in card
    assert f"- command: `linkage-lab train --task {LIMIT} --num-envs 64`" in card
    assert "- commit: `0123456789abcdef0123456789abcdef01234567`" in card
    assert "(started 2026-11-30 07:08:09), checkpoint `model_449.pt`: 450 iterations" in card
    assert "wall time 1,234 s (21 min), 987 env-steps/s" in card
    assert "- fine-tuned from: run: 2026-11-29_01-02-03; iterations: 300" in card


def test_missing_optional_files_are_named_not_invented(policy):
    card = written_card(policy, misses=())
    assert "Not measured: `eval.json` is not in the folder." in card
    assert "Not measured: `reality_gap.json` is not in the folder." in card
    assert "Generated from `train.json`, `sweep.json`, `closed_chain_sweep.json`, `bundle/metadata.json`" in card
    (policy / "bundle" / "metadata.json").unlink()
    assert "Not recorded: `bundle/metadata.json` is not in the folder" in written_card(policy, misses=())


def test_a_reality_gap_is_summarised_per_condition(policy):
    rows = [
        {"condition": "nominal", "case": "vx+0.30_wz+0.00", "runs": 2, "falls": 0, "passed": True},
        {"condition": "delay_40ms", "case": "vx+0.30_wz+0.00", "runs": 2, "falls": 1, "passed": False},
    ]
    document = {
        "episodes_per_case": 2,
        "base_velocity": "the estimator",
        "conditions": [{"name": "nominal", "description": "as built"}, {"name": "delay_40ms", "description": "late"}],
        "rows": rows,
        "summary": {"runs": 4, "falls": 1, "failed_rows": 1, "passed": False},
    }
    (policy / "reality_gap.json").write_text(json.dumps(document))
    card = written_card(policy, misses=())
    assert "4 runs, 1 falls, 1 of 2 rows miss a target" in card
    assert "| nominal | as built | 2 | 0 | 0 of 1 |" in card and "| delay_40ms | late | 2 | 1 | 1 of 1 |" in card
    assert "- reality gap: 1 of 2 rows miss a target; falls under delay_40ms (1)" in card


@pytest.mark.parametrize("name", ["sweep.json", "train.json", "bundle/metadata.json"])
def test_a_corrupt_record_is_an_error_naming_the_file(policy, name):
    (policy / name).write_text('{"cases": [')
    with pytest.raises(ModelCardError, match=re.escape(f"{policy / name}: cannot be read as JSON")):
        write_card(policy, misses=())
    assert not (policy / MODEL_CARD_FILE).exists()


def test_a_record_without_a_field_the_card_needs_names_the_file(policy):
    (policy / "closed_chain_sweep.json").write_text(json.dumps({"task": LIMIT, "summary": {"passed": True}}))
    with pytest.raises(ModelCardError, match=r"closed_chain_sweep\.json: missing or malformed field \(KeyError"):
        write_card(policy, misses=())


def test_the_card_replaces_the_old_one_whole_and_the_module_runs_from_the_command_line(policy, capsys):
    (policy / MODEL_CARD_FILE).write_text("an old card")
    assert main([str(policy)]) == 0
    assert capsys.readouterr().out.strip() == str(policy / MODEL_CARD_FILE)
    assert (policy / MODEL_CARD_FILE).read_text().startswith(f"# Model card: {LIMIT}\n")
    assert sorted(p.name for p in policy.iterdir()) == sorted(
        ["bundle", "closed_chain_sweep.json", "sweep.json", "train.json", MODEL_CARD_FILE]
    )  # no temp file left behind
    (policy / "train.json").write_text("[]")
    assert main([str(policy)]) == 2
    assert "train.json: expected a JSON object" in capsys.readouterr().err
    assert main([str(policy.parent / "nothing")]) == 2
    assert "none of train.json" in capsys.readouterr().err


@pytest.mark.parametrize("task", [LIMIT, "LinkageLab-Velocity-Flat-Marvin-Residual"])
def test_the_shipped_cards_are_generated_from_their_records(task):
    folder = REPO_ROOT / "policies" / task
    card = model_card(read_records(folder), task, task_acceptance(task).known_misses, folder)
    assert (folder / MODEL_CARD_FILE).read_text() == card, "regenerate: python -m linkage_lab.export.model_card"

"""S3N in Isaac Lab matches the standalone serial leg on the chirp (fixed base, three models, ~1 min)."""

from __future__ import annotations

import json
import math

import pytest

pytestmark = pytest.mark.sim
MODELS = ("kin_only", "s3n_act", "s3n_full")


def test_urdf_leg_body_lumps_the_generated_lower_leg():
    from linkage_lab.robots.limit.s3n import described_leg

    body, across_m = described_leg("fl", ankle_rad=0.6)
    # By hand from configs/robots/limit.yaml and robots/limit/description.py: the lower link is the
    # 0.085 m rod (0.10 kg) and the ankle motor 15 mm below the knee (0.38 kg), then, turned 0.6 rad
    # with the ankle about the ankle axis 85 mm below the knee, the ankle block's centre 2 mm below
    # that axis (0.08 kg) and the foot plate's at (+10 mm, -7 mm) (0.05 kg).
    c, s = math.cos(0.6), math.sin(0.6)
    block_x, block_z = s * -0.002, c * -0.002
    foot_x, foot_z = c * 0.010 + s * -0.007, -s * 0.010 + c * -0.007
    mass = 0.10 + 0.38 + 0.08 + 0.05
    along = (0.10 * 0.0425 + 0.38 * 0.015 + 0.08 * (0.085 - block_z) + 0.05 * (0.085 - foot_z)) / mass
    assert body.shank.mass_kg == pytest.approx(mass)
    assert body.shank.com_m == pytest.approx(along, rel=1e-9)
    assert across_m == pytest.approx((0.08 * block_x + 0.05 * foot_x) / mass, rel=1e-9)
    assert body.thigh.mass_kg == pytest.approx(0.15) and body.thigh.com_m == pytest.approx(0.05)
    assert body.thigh_length_m == pytest.approx(0.100)


def test_isaac_leg_matches_standalone_serial_leg(capsys):
    from linkage_lab.cli.main import main
    from linkage_lab.validation.isaac_leg import format_report

    code = main(["s3n", "validate", "--isaac", "--json"])
    # Isaac Lab logs to stdout while it builds the envs; the JSON object is the last line.
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    report = format_report(result)
    assert set(result["models"]) == set(MODELS)
    assert code == (0 if result["passed"] else 1)
    for model in MODELS:
        entry = result["models"][model]
        # The task's articulation and step: its armature is the drive's, one 5 ms step per physics step.
        assert entry["isaac"]["physics_dt_s"] == pytest.approx(0.005)
        assert entry["isaac"]["num_substeps"] == 1
        assert entry["pass"], f"{model}: Isaac differs from the standalone leg beyond the tolerance\n{report}"
    # The effect S3N corrects shows in Isaac as in the standalone leg: Kin-Only is the worst model,
    # by a factor of five at least against S3N-Act (about 6.7 on this swing chirp with the task's
    # previous-step acceleration, the estimate that wins in stance: tests/unit/test_s3n_contact.py).
    for side in ("isaac", "standalone"):
        assert result["oracle_order"][side][-1] == "kin_only", report
        errors = {m: sum(result["models"][m][f"{side}_vs_oracle"]["pos_rmse"]) for m in MODELS}
        assert errors["kin_only"] > 5.0 * errors["s3n_act"], report
    assert result["oracle_order"]["resolved_pairs_agree"], report
    assert result["passed"], report

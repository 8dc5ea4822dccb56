"""The contact-stiffness turn comparison (linkage_lab_experiments.turn.contact_stiffness): pooling and its CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab_experiments.turn.contact_stiffness import CONTACTS, TURN_COMMANDS, main, plot, pooled_rms

pytestmark = pytest.mark.unit


def test_pooled_rms_is_the_rms_of_the_concatenated_runs():
    rng = np.random.default_rng(0)
    runs = [rng.normal(0.0, s, 500) for s in (0.05, 0.1, 0.2)]
    each = [float(np.sqrt(np.mean(r**2))) for r in runs]
    assert pooled_rms(each) == pytest.approx(float(np.sqrt(np.mean(np.concatenate(runs) ** 2))), rel=1e-12)
    assert pooled_rms([0.3, 0.4]) == pytest.approx(math.sqrt((0.09 + 0.16) / 2))


def test_pooled_rms_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="no runs"):
        pooled_rms([])


def test_the_closed_chains_own_contacts_come_first_and_isaac_labs_are_stiffer():
    (_, own), (_, isaac) = CONTACTS
    assert own is None
    assert isaac[0] < 0.02  # MuJoCo's default time constant: a shorter one is a stiffer contact


def test_zero_episodes_is_refused_before_any_run(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--bundle", "nowhere", "--episodes", "0"])
    assert exit_info.value.code == 2
    assert "--episodes must be at least 1" in capsys.readouterr().err


def test_plot_writes_a_png(tmp_path):
    rows = [
        {"contacts": label, "command": list(command), "yaw_rate_rms_radps": 0.1 + 0.01 * i}
        for i, ((label, _), command) in enumerate((c, cmd) for c in CONTACTS for cmd in TURN_COMMANDS)
    ]
    path = plot({"bundle": "b", "rows": rows}, tmp_path / "contact_stiffness.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

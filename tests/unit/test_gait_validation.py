"""Gait parameters outside their meaning are rejected when the config is made, naming the parameter."""

from __future__ import annotations

import dataclasses
import math

import pytest

from linkage_lab.gait.biped import BipedGaitCfg, check_gait_overrides, gait_parameter_names
from linkage_lab.robots.marvin.gait import marvin_gait_cfg, marvin_sprint_gait_cfg

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"step_length_m": -0.05}, "step_length_m = -0.05 is outside [0, inf)"),
        ({"step_height_m": -0.01}, "step_height_m = -0.01 is outside [0, inf)"),
        ({"frequency_hz": 0.0}, "frequency_hz = 0.0 is outside (0, inf)"),
        ({"hip_height_m": -0.5}, "hip_height_m = -0.5 is outside (0, inf)"),
        ({"double_support_margin": 1.0}, "double_support_margin = 1.0 is outside [0, 1)"),
        ({"double_support_margin": -0.1}, "double_support_margin = -0.1 is outside [0, 1)"),
        ({"step_ramp_time_s": -1.0}, "step_ramp_time_s = -1.0 is outside [0, inf)"),
        ({"turn_limit_rad": -0.1}, "turn_limit_rad = -0.1 is outside [0, inf)"),
        ({"sway_amplitude_rad": math.nan}, "sway_amplitude_rad must be a finite number"),
        ({"roll_gain": math.inf}, "roll_gain must be a finite number"),
        ({"pitch_gain": "0.3"}, "pitch_gain must be a finite number"),
        ({"step_length_m": True}, "step_length_m must be a finite number"),
        ({"stance_compensation_rad": {"knee": math.nan}}, "stance_compensation_rad['knee'] must be a finite number"),
    ],
)
def test_values_out_of_range_are_rejected(overrides, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        marvin_sprint_gait_cfg(**overrides)


def test_range_limits_and_signed_gains_are_accepted():
    cfg = marvin_gait_cfg(step_length_m=0.0, double_support_margin=0.0, step_ramp_time_s=0.0, roll_gain=-0.4)
    assert cfg.step_length_m == 0.0 and cfg.roll_gain == -0.4
    marvin_sprint_gait_cfg()  # the shipped gait is valid


def test_unknown_keys_list_the_valid_ones():
    with pytest.raises(ValueError, match="unknown gait parameter\\(s\\) 'step_lenght_m'; valid: .*step_length_m"):
        marvin_sprint_gait_cfg(step_lenght_m=0.1)
    check_gait_overrides({"step_length_m": 0.1})


def test_every_numeric_parameter_has_a_range():
    cfg = marvin_sprint_gait_cfg()
    numeric = {f.name for f in dataclasses.fields(BipedGaitCfg) if isinstance(getattr(cfg, f.name), float | int)}
    # A numeric field without a range would accept NaN and negative lengths unchecked.
    for name in numeric:
        with pytest.raises(ValueError, match=name):
            dataclasses.replace(cfg, **{name: math.nan})
    assert numeric <= set(gait_parameter_names())

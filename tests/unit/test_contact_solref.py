"""A contact's solref and a Newton shape's gains, and the Limit task's contact, the same at any physics step."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.unit


def test_shape_gains_match_newtons_own_conversion():
    # Newton's USD importer converts a MuJoCo solref to its shape gains; ours must agree with it both ways.
    from newton._src.usd.schemas import solref_to_stiffness_damping

    from linkage_lab.physics.contact import mujoco_solref, newton_shape_gains

    for solref in ((0.01, 1.375), (0.02, 1.0), (0.004, 0.7)):
        ke, kd = newton_shape_gains(*solref)
        assert (ke, kd) == pytest.approx(solref_to_stiffness_damping(solref), rel=1e-12)
        assert mujoco_solref(ke, kd) == pytest.approx(solref, rel=1e-12)


def test_isaac_labs_default_shape_is_raised_to_twice_the_step():
    from linkage_lab.physics.contact import mujoco_solref

    # ke 160000 N/m, kd 1100 N·s/m: time constant 2 / 1100 = 1.82 ms, damping ratio 1100 / (2 · 400) = 1.375.
    timeconst, dampratio = mujoco_solref(160000.0, 1100.0)
    assert timeconst == pytest.approx(2.0 / 1100.0) and dampratio == pytest.approx(1.375)
    # MuJoCo raises it to twice the step: 10 ms at 5 ms, 5 ms at 2.5 ms (four times as stiff).
    assert mujoco_solref(160000.0, 1100.0, 0.005) == pytest.approx((0.01, 1.375))
    assert mujoco_solref(160000.0, 1100.0, 0.0025) == pytest.approx((0.005, 1.375))


@pytest.mark.parametrize("bad", [0.0, -0.01, math.nan, math.inf])
def test_a_contact_needs_finite_positive_constants(bad):
    from linkage_lab.physics.contact import mujoco_solref, newton_shape_gains

    with pytest.raises(ValueError, match="finite and positive"):
        newton_shape_gains(bad, 1.0)
    with pytest.raises(ValueError, match="finite and positive"):
        mujoco_solref(1000.0, bad)


def test_limit_task_contact_is_what_its_5ms_policies_met_at_its_finer_step():
    from linkage_lab.physics.contact import mujoco_solref
    from linkage_lab.runtime import resolve_configs

    env_cfg, _ = resolve_configs("LinkageLab-Velocity-Flat-Limit", [], "cpu")
    dt = env_cfg.sim.dt
    assert (dt, env_cfg.decimation) == (0.0025, 8) and dt * env_cfg.decimation == pytest.approx(0.02)
    assert env_cfg.scene.contact_forces.update_period == dt and env_cfg.sim.render_interval == 8
    shape = env_cfg.sim.physics.default_shape_cfg
    # The solref MuJoCo applies at the task's step equals what Isaac Lab's default shape got at 5 ms.
    assert mujoco_solref(shape.ke, shape.kd, dt) == pytest.approx(mujoco_solref(160000.0, 1100.0, 0.005))
    # ... and the step does not change it: stated at least twice the step, MuJoCo leaves it as given.
    assert mujoco_solref(shape.ke, shape.kd, dt) == pytest.approx(mujoco_solref(shape.ke, shape.kd))

"""The closed-chain models' terrain: flat by default, boxes (steps) where asked, and the robot rests on them."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from linkage_lab.robots.limit.closed_chain import limit_closed_chain
from linkage_lab.sim2sim.assembly import lowest_point_z
from linkage_lab.sim2sim.mjcf import Ground, GroundBox, SolverSettings, stairs

pytestmark = pytest.mark.unit


def test_stairs_rise_one_step_height_per_step_and_meet_without_gaps():
    ground = stairs(step_height_m=0.05, step_depth_m=0.3, steps=3, start_x_m=0.5, width_m=1.0)
    tops = [box.center_m[2] + box.half_size_m[2] for box in ground.boxes]
    assert tops == pytest.approx([0.05, 0.10, 0.15])
    edges = [(box.center_m[0] - box.half_size_m[0], box.center_m[0] + box.half_size_m[0]) for box in ground.boxes]
    assert edges[0][0] == pytest.approx(0.5) and edges[-1][1] == pytest.approx(0.5 + 3 * 0.3)
    assert all(a[1] == pytest.approx(b[0]) for a, b in zip(edges, edges[1:], strict=False))
    assert all(box.half_size_m[1] == pytest.approx(0.5) for box in ground.boxes)


@pytest.mark.parametrize("bad", [dict(steps=0), dict(step_height_m=-0.1), dict(step_depth_m=0.0)])
def test_impossible_stairs_are_refused(bad):
    with pytest.raises(ValueError, match="stairs need"):
        stairs(**{"step_height_m": 0.05, "step_depth_m": 0.3, "steps": 2, **bad})
    with pytest.raises(ValueError, match="ground box"):
        GroundBox((0.0, 0.0, float("nan")), (0.1, 0.1, 0.1))


def test_the_default_ground_is_the_plane_alone():
    model = limit_closed_chain().compile()
    world_geoms = [model.geom(i).name for i in range(model.ngeom) if model.geom_bodyid[i] == 0]
    assert world_geoms == ["ground"]


def _settled_lowest_point(ground: Ground) -> float:
    """The Limit dropped from 0.3 m, motors off, onto ``ground``: its lowest point after 1.5 s (m)."""
    chain = limit_closed_chain(settings=SolverSettings(ground=ground))
    model = chain.compile()
    data = mujoco.MjData(model)
    chain.reset(data, ground_clearance_m=0.3)
    for _ in range(int(1.5 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    return lowest_point_z(model, data)


def test_the_robot_comes_to_rest_on_a_block_as_on_the_floor():
    # Oracle: a rigid 5 cm block under the whole robot lifts where it rests by the block's height.
    block = Ground((GroundBox((0.0, 0.0, 0.025), (1.0, 1.0, 0.025)),))
    flat, raised = _settled_lowest_point(Ground()), _settled_lowest_point(block)
    assert abs(flat) < 0.005
    assert raised - flat == pytest.approx(0.05, abs=0.005)
    model = limit_closed_chain(settings=SolverSettings(ground=block)).compile()
    box = model.geom("ground_box_0")
    np.testing.assert_allclose(box.size, [1.0, 1.0, 0.025])
    np.testing.assert_allclose(model.geom_pos[box.id], [0.0, 0.0, 0.025])

"""The step profiler's bookkeeping: exclusive times of nested spans, shares, kernel groups (no simulation)."""

from __future__ import annotations

import types

import pytest

from linkage_lab_experiments.bench import step_profile
from linkage_lab_experiments.bench.step_profile import CATEGORIES, ExclusiveTimers, kernel_group, shares

pytestmark = pytest.mark.unit


class FakeClock:
    """A clock the test advances by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_nested_spans_charge_exclusive_time():
    clock = FakeClock()
    timers = ExclusiveTimers(clock)
    host = types.SimpleNamespace()

    def kernel():
        clock.now += 2.0

    def physics():
        clock.now += 1.0
        host.kernel()
        host.kernel()
        clock.now += 0.5

    host.kernel, host.physics = kernel, physics
    timers.wrap(host, "kernel", "physics: constraint solver")
    timers.wrap(host, "physics", "physics: launch + Python")
    timers.enabled = True
    host.physics()
    # physics spans 1 + 2·2 + 0.5 = 5.5 s, of which 4 s are the two kernels: 1.5 s its own.
    assert timers.seconds == {"physics: constraint solver": 4.0, "physics: launch + Python": 1.5}
    assert timers.calls == {"physics: constraint solver": 2, "physics: launch + Python": 1}
    timers.restore()
    assert host.kernel is kernel and host.physics is physics


def test_disabled_timers_pass_through_and_module_attributes_restore():
    timers = ExclusiveTimers(FakeClock())
    module = types.ModuleType("fake_module")
    module.invoke = lambda x: x + 1
    original = module.invoke
    timers.wrap(module, "invoke", lambda x: "physics: collision")
    assert module.invoke(1) == 2 and not timers.seconds  # not enabled: nothing recorded
    timers.restore()
    assert module.invoke is original


def test_a_wrapped_class_method_is_restored_to_the_class():
    class Manager:
        def compute(self):
            return 3

    manager = Manager()
    timers = ExclusiveTimers(FakeClock())
    timers.wrap(manager, "compute", "managers: rewards")
    assert "compute" in vars(manager)
    timers.restore()
    assert "compute" not in vars(manager) and manager.compute() == 3


def test_shares_add_up_and_the_rest_is_other():
    seconds = {"physics: constraint solver": 3.0, "managers: rewards": 1.0}
    result = shares(seconds, 8.0)
    assert list(result) == list(CATEGORIES)
    assert result["physics: constraint solver"] == 0.375 and result["managers: rewards"] == 0.125
    assert result["other"] == pytest.approx(0.5) and sum(result.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("module", "group"),
    [
        ("mujoco_warp._src.solver", "physics: constraint solver"),
        ("mujoco_warp._src.constraint", "physics: constraint rows"),
        ("newton._src.geometry.narrow_phase", "physics: collision"),
        ("mujoco_warp._src.smooth", "physics: rigid-body dynamics"),
        ("newton._src.solvers.mujoco.kernels", "physics: Newton <-> MuJoCo-Warp copies"),
        ("isaaclab.sensors.contact", step_profile.OTHER_KERNELS),
    ],
)
def test_kernel_groups(module, group):
    assert kernel_group(module) == group


def test_table_and_chart(tmp_path):
    row = {
        "task": "LinkageLab-Velocity-Flat-Limit",
        "num_envs": 64,
        "env_steps_per_s": 800.0,
        "profiled_env_steps_per_s": 770.0,
        "ms_per_env_step": 83.0,
        "shares": shares({"physics: constraint solver": 0.5, "managers: rewards": 0.1}, 1.0),
    }
    table = step_profile.format_table([row]).splitlines()
    assert table[0].split()[-1] == "Limit/64"
    solver = next(line for line in table if line.startswith("physics: constraint solver"))
    assert solver.split()[-1] == "50.0"
    assert next(line for line in table if line.startswith("physics, all")).split()[-1] == "50.0"
    json_path, png_path = step_profile.write_results([row], tmp_path, "profile_T")
    assert json_path.name == "profile_T.json" and png_path.read_bytes()[:4] == b"\x89PNG"

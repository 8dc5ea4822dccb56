"""The Limit's canonical joint table (docs/design/robots.md §1.1)."""

from __future__ import annotations

import re

import pytest

from linkage_lab.robots.limit import joints as jt

pytestmark = pytest.mark.unit

# Written out from the spec's table, independently of the derivation rule.
SPEC_TABLE = {
    1: "fl_hip", 2: "fl_knee", 3: "fl_ankle",
    4: "fr_hip", 5: "fr_knee", 6: "fr_ankle",
    7: "rl_hip", 8: "rl_knee", 9: "rl_ankle",
    10: "rr_hip", 11: "rr_knee", 12: "rr_ankle",
}  # fmt: skip


def test_table_matches_spec():
    assert {e.joint_id: e.name for e in jt.JOINT_TABLE} == SPEC_TABLE
    assert jt.JOINT_IDS == tuple(range(1, 13))
    assert jt.JOINT_NAMES == tuple(SPEC_TABLE[i] for i in range(1, 13))


def test_derivation_rule():
    legs = {"fl": 0, "fr": 1, "rl": 2, "rr": 3}
    joints = {"hip": 0, "knee": 1, "ankle": 2}
    for leg, li in legs.items():
        for joint, ji in joints.items():
            assert jt.joint_id(leg, joint) == 1 + 3 * li + ji
            entry = jt.entry_by_id(1 + 3 * li + ji)
            assert (entry.leg, entry.joint, entry.leg_index, entry.joint_index) == (leg, joint, li, ji)


def test_name_grammar():
    grammar = re.compile(r"^(fl|fr|rl|rr)_(hip|knee|ankle)$")
    assert all(grammar.match(name) for name in jt.JOINT_NAMES)
    for bad in ("FL_hip", "fl-hip", "fl_thigh", "lf_hip", "fl_hip ", "hip_fl"):
        assert not jt.NAME_PATTERN.match(bad)
        with pytest.raises(KeyError, match="unknown Limit joint name"):
            jt.entry_by_name(bad)


def test_trot_pairs():
    assert jt.trot_pair_ids("A") == (1, 2, 3, 10, 11, 12)
    assert jt.trot_pair_ids("B") == (4, 5, 6, 7, 8, 9)
    assert set(jt.trot_pair_ids("A")).isdisjoint(jt.trot_pair_ids("B"))


@pytest.mark.parametrize("bad", [0, 13, -1, "x", None])
def test_unknown_id_is_a_clear_error(bad):
    with pytest.raises(KeyError, match="valid ids are 1-12"):
        jt.entry_by_id(bad)

"""The Limit's canonical joint table (docs/design/robots.md §1.1): the one numbering every interface uses.

``joint_id = 1 + 3 * leg_index + joint_index`` with legs FL, FR, RL, RR and joints hip, knee,
ankle. Names are ``{leg}_{joint}``. Policy actions and observations, logs and exported files
use this order; the simulator's own joint order never leaks out (the articulation pins it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEGS: tuple[str, ...] = ("fl", "fr", "rl", "rr")
JOINT_TYPES: tuple[str, ...] = ("hip", "knee", "ankle")
#: Trot pairs: legs of a pair move together; the pairs are half a cycle apart.
TROT_PAIRS: dict[str, tuple[str, str]] = {"A": ("fl", "rr"), "B": ("fr", "rl")}

NAME_PATTERN = re.compile(r"^(fl|fr|rl|rr)_(hip|knee|ankle)$")


@dataclass(frozen=True)
class JointEntry:
    """One row of the canonical table."""

    joint_id: int
    name: str
    leg: str
    joint: str
    leg_index: int
    joint_index: int


def joint_id(leg: str, joint: str) -> int:
    """Canonical id of ``{leg}_{joint}``: ``1 + 3 * leg_index + joint_index``."""
    if leg not in LEGS:
        raise KeyError(f"unknown leg {leg!r}; legs are {', '.join(LEGS)}")
    if joint not in JOINT_TYPES:
        raise KeyError(f"unknown joint {joint!r}; joints are {', '.join(JOINT_TYPES)}")
    return 1 + 3 * LEGS.index(leg) + JOINT_TYPES.index(joint)


JOINT_TABLE: tuple[JointEntry, ...] = tuple(
    JointEntry(joint_id(leg, joint), f"{leg}_{joint}", leg, joint, li, ji)
    for li, leg in enumerate(LEGS)
    for ji, joint in enumerate(JOINT_TYPES)
)
#: Joint names in canonical (id) order.
JOINT_NAMES: tuple[str, ...] = tuple(entry.name for entry in JOINT_TABLE)
#: Joint ids in canonical order (1 … 12).
JOINT_IDS: tuple[int, ...] = tuple(entry.joint_id for entry in JOINT_TABLE)

_BY_ID = {entry.joint_id: entry for entry in JOINT_TABLE}
_BY_NAME = {entry.name: entry for entry in JOINT_TABLE}


def entry_by_id(joint_id_value: int) -> JointEntry:
    """The table row of a joint id; raises ``KeyError`` naming the valid range."""
    try:
        return _BY_ID[int(joint_id_value)]
    except (KeyError, ValueError, TypeError):
        raise KeyError(f"unknown Limit joint id {joint_id_value!r}; valid ids are 1-12") from None


def entry_by_name(name: str) -> JointEntry:
    """The table row of a joint name; raises ``KeyError`` for a name outside the grammar."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown Limit joint name {name!r}; names are {{fl,fr,rl,rr}}_{{hip,knee,ankle}}") from None


def trot_pair_ids(pair: str) -> tuple[int, ...]:
    """Sorted joint ids of trot pair ``"A"`` or ``"B"``."""
    legs = TROT_PAIRS[pair]
    return tuple(sorted(e.joint_id for e in JOINT_TABLE if e.leg in legs))

"""Sim-tier helpers: build a project env on the CPU with a handful of envs."""

from __future__ import annotations

import pytest
import torch


def _zero_actions(env) -> torch.Tensor:
    unwrapped = env.unwrapped
    return torch.zeros(unwrapped.num_envs, unwrapped.action_manager.total_action_dim, device=unwrapped.device)


@pytest.fixture
def zero_actions():
    """``zero_actions(env)``: a zero action batch for ``env``."""
    return _zero_actions


@pytest.fixture
def build_env():
    """Return a context-manager factory ``build_env(task, num_envs, overrides)``."""
    from linkage_lab.runtime import make_env

    def factory(task: str, num_envs: int = 4, overrides: tuple[str, ...] = ()):
        return make_env(task, num_envs=num_envs, device="cpu", overrides=overrides)

    return factory

"""Termination terms of the sprint, relative to each env's own start (its origin on the track)."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg


def _track_pos(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    return env.scene[asset_cfg.name].data.root_pos_w.torch - env.scene.env_origins


def torso_below(env: ManagerBasedRLEnv, height_m: float, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")):
    """Fell: the torso (root) is below ``height_m`` (m)."""
    return env.scene[asset_cfg.name].data.root_pos_w.torch[:, 2] < height_m


def left_lane(env: ManagerBasedRLEnv, half_width_m: float, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")):
    """Left the track: ``|y|`` from the lane centre exceeds ``half_width_m`` (m)."""
    return _track_pos(env, asset_cfg)[:, 1].abs() > half_width_m


def finished(
    env: ManagerBasedRLEnv, finish_x_m: float, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """Crossed the finish line at ``x = finish_x_m`` (m, from the env origin)."""
    return _track_pos(env, asset_cfg)[:, 0] >= finish_x_m

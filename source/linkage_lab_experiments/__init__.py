"""Experiments on the Linkage Lab library: studies, cross-checks and benchmarks.

Nothing in ``linkage_lab`` imports this package. Its parts:

- ``analysis``: the S3N fidelity benchmark against the closed-chain leg oracle, M_p identification, the
  shared leg drive loop and the ankle library's timing;
- ``validation``: cross-checks between implementations (Isaac Lab vs the standalone leg, S3N in contact,
  the ankle armature, the explicit-torque bound);
- ``bench``: throughput benchmarks (env, physics, PPO training, video, the deploy runtime), each printing
  ratios measured side by side;
- ``transfer``: the sim-to-sim transfer table; ``turn``: the robots' turning studies;
- ``cli``: the ``linkage-lab bench`` and ``linkage-lab s3n`` commands, which the CLI finds through the
  ``linkage_lab.commands`` entry point group.
"""

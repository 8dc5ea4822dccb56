"""The robots: one package per robot, each registering a :class:`~linkage_lab.robots.registry.RobotSpec`."""

"""The ``linkage-lab`` command line."""

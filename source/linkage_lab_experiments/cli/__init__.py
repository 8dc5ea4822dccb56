"""The experiments' ``linkage-lab`` commands (entry point group ``linkage_lab.commands``)."""

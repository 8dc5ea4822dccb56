"""Action terms that bring their own robot-side files into an export bundle (e.g. a gait prior).

An action term extends the bundle by defining any of:

* ``bundle_metadata() -> dict``: keys merged into ``metadata.json`` (and the ONNX ``metadata_props``);
* ``write_bundle_files(out_dir) -> {relative path: description}``: files written into the bundle;
* ``bundle_readme_section() -> str``: Markdown appended to the bundle's README.

The bundle code stays generic: it never asks which robot or which term it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_HOOKS = ("bundle_metadata", "write_bundle_files", "bundle_readme_section")


def bundle_extensions(env: Any) -> list[Any]:
    """The env's action terms that define at least one bundle hook, in the action manager's order."""
    manager = env.unwrapped.action_manager
    terms = [manager.get_term(name) for name in manager.active_terms]
    return [term for term in terms if any(callable(getattr(term, hook, None)) for hook in _HOOKS)]


def extension_metadata(extensions: list[Any]) -> dict[str, Any]:
    """The metadata the extensions add (later terms win on a shared key)."""
    metadata: dict[str, Any] = {}
    for term in extensions:
        if callable(getattr(term, "bundle_metadata", None)):
            metadata.update(term.bundle_metadata())
    return metadata


def write_extension_files(extensions: list[Any], out_dir: Path) -> dict[str, str]:
    """Let each extension write its files into ``out_dir``; returns ``{relative path: description}``."""
    files: dict[str, str] = {}
    for term in extensions:
        if callable(getattr(term, "write_bundle_files", None)):
            files.update(term.write_bundle_files(Path(out_dir)))
    return files


def extension_readme(extensions: list[Any]) -> str:
    """The extensions' README sections, each under its own heading (empty when none)."""
    sections = []
    for term in extensions:
        if callable(getattr(term, "bundle_readme_section", None)):
            sections.append(f"\n## {type(term).__name__}\n\n{term.bundle_readme_section().rstrip()}\n")
    return "".join(sections)

"""List the modules outside the robot folders whose code names a robot (comments and docstrings aside).

A robot is named by a string literal or identifier holding a registered robot's name as a word:
``"marvin"``, ``marvin_gait_cfg``, ``LimitDeployConfig``, ``linkage_lab.robots.limit``. The word
``limit`` alone is generic (a torque limit), so for it only the forms a robot name takes count:
the exact literal ``"limit"`` (not as a mapping key or subscript), a module path segment, or a
CamelCase identifier starting ``Limit``. A line whose comment says ``not a robot`` is skipped (the URDF
``<limit>`` tag).

Usage: ``python scripts/robot_mentions.py [ROBOT ...]`` (default: every ``configs/robots/*.yaml``).
Prints one line per module with its mentions, then the count.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source" / "linkage_lab"
#: Folders that may name their robot: the robot packages, the per-robot task deltas and the CLI.
EXEMPT = ("robots/", "cli/")
EXEMPT_PATTERN = re.compile(r"^tasks/[^/]+/config/")


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


_TRIVIA = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)


def _is_key(tokens: list[tokenize.TokenInfo], k: int) -> bool:
    after = tokens[k + 1].string if k + 1 < len(tokens) else ""
    before = tokens[k - 1].string if k else ""
    return after == ":" and before in ("{", ",") or before == "[" and after == "]"


def _patterns(robot: str) -> list[re.Pattern[str]]:
    camel = robot[:1].upper() + robot[1:]
    if robot == "limit":
        return [
            re.compile(r"^['\"]limit['\"]$"),
            re.compile(r"\.limit(\.|$|['\"])"),
            re.compile(r"(^|_)Limit[A-Z_]|^Limit$|^LIMIT_"),
            re.compile(
                r"(^|_)limit_(articulation|s3n|trot|leg_body|joints|contact|stance|deploy|config|gait|motor_limits|joint_ids|oracle)"
            ),
            re.compile(r"build_limit_"),
        ]
    return [re.compile(rf"(?i)(^|[^a-z]){robot}([^a-z]|$)"), re.compile(rf"{camel}[A-Z]")]


def mentions(path: Path, robots: list[str]) -> list[str]:
    text = path.read_text()
    skip = _docstring_lines(ast.parse(text))
    skip |= {
        n for n, line in enumerate(text.splitlines(), 1) if "# " in line and "not a robot" in line.split("# ", 1)[1]
    }
    pats = [p for r in robots for p in _patterns(r)]
    found = []
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _TRIVIA]
    for k, tok in enumerate(tokens):
        if tok.type not in (tokenize.NAME, tokenize.STRING) or tok.start[0] in skip:
            continue
        if tok.type == tokenize.STRING and _is_key(tokens, k):
            continue  # a mapping key or subscript ("limit": 2.0, check["limit"]) is a field name
        for part in re.split(r"[\s/]+", tok.string):
            if any(p.search(part) for p in pats):
                found.append(f"{tok.start[0]}:{part[:40]}")
                break
    for node in ast.walk(ast.parse(text)):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        if any(set(m.split(".")) & set(robots) for m in modules):
            found.append(f"{node.lineno}:import")
    return found


def main(argv: list[str]) -> int:
    robots = argv or sorted(p.stem for p in (ROOT / "configs" / "robots").glob("*.yaml"))
    count = 0
    for path in sorted(SOURCE.rglob("*.py")):
        rel = path.relative_to(SOURCE).as_posix()
        if rel.startswith(EXEMPT) or EXEMPT_PATTERN.match(rel):
            continue
        found = mentions(path, robots)
        if found:
            count += 1
            print(f"{rel}: {len(found)}  ({', '.join(found[:4])}{', ...' if len(found) > 4 else ''})")
    print(f"{count} modules outside {', '.join(EXEMPT)}, tasks/*/config/ name a robot ({', '.join(robots)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

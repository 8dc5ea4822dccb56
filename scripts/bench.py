"""Thin script wrapper: `python scripts/bench.py ...` is `linkage-lab bench ...`."""

import sys

from linkage_lab.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))

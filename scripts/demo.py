"""Thin script wrapper: `python scripts/demo.py ...` is `linkage-lab demo ...`."""

import sys

from linkage_lab.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["demo", *sys.argv[1:]]))

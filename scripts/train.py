"""Thin script wrapper: `python scripts/train.py ...` is `linkage-lab train ...`."""

import sys

from linkage_lab.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))

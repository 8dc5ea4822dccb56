"""The 10 m sprint benchmark (docs/design/gait.md §4): one headless race, its metrics and its path plot."""

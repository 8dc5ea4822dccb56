"""Benchmarks that print ratios measured side by side in one run."""

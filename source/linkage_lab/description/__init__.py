"""description."""

"""robots."""

"""The artifacts area's use cases."""

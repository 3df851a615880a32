"""The sessions area's storage: providers, models, spec sessions and their turns."""

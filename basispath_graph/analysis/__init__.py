"""Answers for researchers, read from the store: why a path was kept or discarded; comparisons."""

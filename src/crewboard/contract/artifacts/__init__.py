"""Artifact tools."""

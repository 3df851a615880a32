"""Spec session tools."""

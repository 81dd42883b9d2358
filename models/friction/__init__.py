"""Friction geometry."""

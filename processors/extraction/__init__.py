"""Extractors at run time: inline values parsed from an answer, structured values from a follow-up call."""

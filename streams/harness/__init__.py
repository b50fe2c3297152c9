"""Drivers of the whole system from outside — shared by the tests and ``bench/`` (not test code).

``workers``: real worker processes, topic readers and producers; ``echo_model``: a job-level fake
model for runs of the core alone (deterministic, content-derived, instant).
"""

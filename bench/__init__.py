"""Benchmarks (``make bench``): figures against baselines measured in the same run, not tests.

Each module measures one thing and prints it next to its baseline and the ratio, so the figures
compare across machines; ``python -m bench`` runs them all and writes ``bench/RESULTS.md``.
"""

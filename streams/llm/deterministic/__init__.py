"""A deterministic stand-in model (provider ``om-deterministic``) for tests, demos and benchmarks."""

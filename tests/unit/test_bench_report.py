"""A benchmark run replaces only its sections' figures in bench/RESULTS.md (bench/report_merge.py)."""

from __future__ import annotations

from bench.report_merge import merged

FILE = """# Benchmark results

## 1a. Core

```
old core figures
```

Prose about the core.

## 2. Latency

```
old latency figures
```

Prose about latency.
"""


def test_a_run_replaces_its_sections_figures_and_keeps_all_prose() -> None:
    out = merged(FILE, ["## 2. Latency\n\n```\nnew latency figures\n```\n"])
    assert "new latency figures" in out and "old latency figures" not in out
    assert "old core figures" in out
    assert "Prose about latency." in out and "Prose about the core." in out


def test_a_new_section_is_added_at_the_end() -> None:
    out = merged(FILE, ["## 9. Scaling\n\n```\nscaling figures\n```\n"])
    assert out.rstrip().endswith("```\nscaling figures\n```")
    assert out.startswith(FILE.rstrip())


def test_a_section_without_figures_gets_them_under_its_heading() -> None:
    out = merged("# R\n\n## 3. Waiting\n\nOnly prose.\n", ["## 3. Waiting\n\n```\nfigures\n```\n"])
    assert out.index("figures") < out.index("Only prose.")

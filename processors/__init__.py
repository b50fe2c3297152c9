"""The pure core: decisions, prompts and parsing, with no IO."""

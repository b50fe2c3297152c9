"""Operator code run by the LLM worker around each Observer/Reflector call (spec §2.7)."""

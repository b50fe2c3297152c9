"""The Reflector: rewrite the observation log shorter, escalating compression until it fits."""

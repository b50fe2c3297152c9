"""Model calls for the Observer, Reflector and extractors, through litellm (see README.md)."""

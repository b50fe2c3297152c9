"""The one error local services raise: its message says what went wrong *and* what to do next."""


class ServiceError(RuntimeError):
    """A local service could not be prepared, started or reached; the message is for a person."""

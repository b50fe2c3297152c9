"""Wire models of every event, job, result, record and envelope, serialised with orjson."""

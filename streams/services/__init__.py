"""Local, no-Docker services (the Apache Kafka broker as a plain JVM process) and their CLI."""

"""The runtime shell: Faust app, workers, ClickHouse access, reader service and CLI around the pure core."""

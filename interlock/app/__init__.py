"""The composition root: the components and how each runs, the supervisor, the stage
host, the embedded stack, plugin discovery and adapter wiring, and the CLI."""

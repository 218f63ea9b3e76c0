"""Interlock's wire and workflow contracts: pure pydantic, no I/O.

Everything that crosses a process boundary (the event envelope, subject names, stream and
consumer names) and every workflow definition lives here, so that the projector, the relay,
the stage services and outside systems agree on one vocabulary.
"""

"""The namespaces of Interlock's public API, as the README lists them: what a plugin, an
upstream system or a plugin's tests import."""

NAMESPACES = (
    "interlock",
    "interlock.errors",
    "interlock.definition",
    "interlock.adapters.http",
    "interlock.testing",
    "interlock.client",
)

"""Adapters: implementations of the ports in `services.ports` for concrete external systems.

Each adapter translates its transport's failures into the ports' errors, so stage services
never catch a driver exception.
"""

from interlock.services.adapters.sim import SimAdapter, SimEffectProvider

__all__ = ["SimAdapter", "SimEffectProvider"]

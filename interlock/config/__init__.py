"""The shared configuration: settings, secrets, access, the broker's configuration,
telemetry, plugin discovery and the embedded stack's record. Imported by every component, the
console and the tools; imports nothing of the composition root (`interlock.app`) or the
operations (`interlock.ops`)."""

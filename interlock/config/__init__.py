"""The shared configuration: settings, secrets, access, the broker's configuration,
telemetry and the table of components. Imported by every component, the console and the
tools; imports nothing of the composition root (`interlock.app`) or the operations."""

"""What every consumer shares, the projector's and the stage services' alike: the continuous,
ordered pull consumer, dead-lettering with a reason, the redelivery policy, and the JetStream
topology (streams and consumers) with its idempotent provisioning."""

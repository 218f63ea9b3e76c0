"""The stage runtime: how a stage service consumes its jobs, calls the outside world and
submits its one result. What it shares with the projector's consumer (pulling, dead-letters,
redelivery) lives in `interlock.messaging`."""

"""The consumer runtime every Interlock consumer uses (the projector included): delivery
accounting, dead-lettering with a reason, and trace propagation on consume and publish."""

"""Stage services, the timer service, the approval gateway, and the consumer runtime they share."""

"""PostgreSQL persistence for the projector: schema, migrations and the workflow store."""

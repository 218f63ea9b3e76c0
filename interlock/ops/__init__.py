"""Operations: the read models and operator acts the CLI, the console, the client and the
tools share (queries, signals and commands, bulk selection, migration, evaluation, costs,
traces). Imports the shared configuration, never the composition root."""

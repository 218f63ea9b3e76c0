"""The console's pages: login, workflows, one workflow, human tasks, operations."""

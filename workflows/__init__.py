"""The workflow types the runtime ships, each a plugin registered under the entry point group
`interlock.workflows` exactly as a third party's would be (see the project's pyproject)."""

"""The agent loop, model backends and evaluation (see ARCHITECTURE.md); arrives with its issue."""

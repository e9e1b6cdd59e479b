"""Self-play task proposers and loops (see ARCHITECTURE.md); arrive with their issue."""

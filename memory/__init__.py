"""Memory stores for memory-based learners (see ARCHITECTURE.md); arrive with their issue."""

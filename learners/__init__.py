"""Learners behind the Learner protocol (see ARCHITECTURE.md); arrive with their issues."""

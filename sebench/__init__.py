"""The framework's root: what every package may import (it imports nothing of ours)."""

from sebench.errors import SebenchError

__all__ = ["SebenchError"]

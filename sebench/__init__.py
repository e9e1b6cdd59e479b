"""The framework's root: what every package may import (it imports nothing of ours)."""

from sebench.errors import DataError, SebenchError, SettingError

__all__ = ["DataError", "SebenchError", "SettingError"]

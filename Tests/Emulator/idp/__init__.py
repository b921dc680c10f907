"""Identity provider emulator for tokenbroker's integration tests (standard library only)."""

from .certs import make_certs
from .emulator import Emulator
from .options import Options

__all__ = ["Emulator", "Options", "make_certs"]

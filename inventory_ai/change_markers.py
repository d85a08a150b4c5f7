"""A change one worker makes that every worker on this host must notice at once: a marker file in
the instance folder, replaced (never touched) on each change, looked at with one stat. A new file
(inode) tells two changes apart even where the file system keeps times to the second. Other hosts
sharing the database notice through the cache's own time limit (auth.py, assistant/registry.py)."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path


class ChangeMarker:
    def __init__(self, folder: str | os.PathLike, name: str) -> None:
        self.path = Path(folder) / name

    def mark(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        fresh.write_text(secrets.token_hex(8))
        os.replace(fresh, self.path)

    def current(self) -> tuple[int, int] | None:
        """The marker as it is now, to compare with what a cache saw: None before any change."""
        try:
            seen = os.stat(self.path)
        except FileNotFoundError:
            return None
        return seen.st_ino, seen.st_mtime_ns

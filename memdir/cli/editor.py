"""Open text in the user's editor ($VISUAL, else $EDITOR, else vi) and read it back."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from memdir.core.errors import MemdirError


def edit_text(text: str, suffix: str = ".md") -> str | None:
    """The edited text, or None when the editor was closed without saving."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or ("notepad" if os.name == "nt" else "vi")
    fd, name = tempfile.mkstemp(prefix="memdir-", suffix=suffix)
    path = Path(name)
    try:
        # newline="" both ways: a CRLF memory must come back byte for byte when left unedited.
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        before = path.stat().st_mtime_ns
        try:
            # No shell: the editor command is split like a shell would ("code --wait" works),
            # and the file name is passed as one argument whatever it contains.
            completed = subprocess.run([*shlex.split(command), str(path)], check=False)
        except (OSError, ValueError) as exc:
            raise MemdirError(f"cannot start the editor {command!r}: {exc}; set $EDITOR") from None
        if completed.returncode != 0:
            raise MemdirError(f"the editor {command!r} exited with status {completed.returncode}; nothing saved")
        with open(path, encoding="utf-8", newline="") as handle:
            edited = handle.read()
        if edited == text and path.stat().st_mtime_ns == before:
            return None
        return edited
    finally:
        path.unlink(missing_ok=True)

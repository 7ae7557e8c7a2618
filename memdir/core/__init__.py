"""The core: a memory file, the folder on disk, MEMORY.md, settings, and the write path's screen."""

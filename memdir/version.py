"""memdir's version: a leaf module, so that a core module can name the version (the parse cache,
SARIF output) without importing the package root, which imports the core."""

__version__ = "0.1.0"

"""The write path's far end: extraction from a session through the Anthropic API, and its client."""

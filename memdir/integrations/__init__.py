"""Where memdir meets other programs: Claude Code's hooks, git's merge driver, watch, agent tools."""

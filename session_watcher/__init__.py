"""session_watcher"""

# the one version: pyproject.toml reads it, .claude-plugin/plugin.json repeats it (a test holds them equal)
__version__ = "0.1.0"

"""OpenAI Codex CLI as an agent: its rollout files, their events, its prices and cache classes."""

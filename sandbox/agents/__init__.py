"""Agents: one async method, given the conversation so far, return the next assistant turn."""

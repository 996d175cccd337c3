"""Model providers, the agent loop, conversation store."""

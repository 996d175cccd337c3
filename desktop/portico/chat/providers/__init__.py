"""Model providers: ``openai`` (Chat Completions, any OpenAI-compatible server) and
``anthropic`` (Messages API), on the official async SDKs over httpx2."""

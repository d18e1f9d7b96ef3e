"""LLM providers behind one interface: OpenAI-compatible endpoints, optional local GGUF, rule-based offline default."""

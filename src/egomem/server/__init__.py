"""Server: the streaming WebSocket service, the memory admin REST API and the web inspector."""

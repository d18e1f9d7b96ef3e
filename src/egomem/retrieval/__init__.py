"""Retrieval: polling identity into the Level-1 MemChunk; <retr> queries into the Level-2 MemChunk; hybrid search."""

"""Memory management: episodic trigger, memory extractor, memory update agent, consolidation."""

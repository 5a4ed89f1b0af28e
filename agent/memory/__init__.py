"""Long-term memory: pure policy (gate, ranking, budget) and the service that runs it over the ports."""

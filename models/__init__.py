"""Contact models declared as MCPs (installed as ``mcpkit.models``)."""

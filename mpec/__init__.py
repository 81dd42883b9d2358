"""MPEC horizons (installed as ``mcpkit.mpec``)."""

"""Local fake HTTP servers that speak external APIs' real wire formats (no test reaches the network)."""

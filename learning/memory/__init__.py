"""A seat's memory: the diary, episodes, skills and their search, and condensation."""

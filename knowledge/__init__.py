"""Team knowledge: the Searcher and PromotionWriter seams and their backends."""

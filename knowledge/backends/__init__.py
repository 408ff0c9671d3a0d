"""Knowledge backends: native pages in our tables, and Confluence."""

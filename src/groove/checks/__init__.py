"""Health checks over a knowledge base: ``doctor`` (the index against the folder) and ``validate`` (notes against a schema)."""

"""Data before training (the assistant lab's data section): a generated raw corpus with known injected problems,
quality filters, exact deduplication by hashing, near-duplicate removal with MinHash + LSH, a test-set
contamination check by n-gram overlap, and a tiny GPT trained on the raw against the cleaned corpus (live)."""
from sim.dedup.minhash import jaccard, jaccard_estimate, lsh_bands, minhash, shingles

__all__ = ["jaccard", "jaccard_estimate", "lsh_bands", "minhash", "shingles"]

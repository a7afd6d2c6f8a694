"""The language-model lab: tokenizer, the synthetic language, the tiny GPT's live run and scaling laws (built on
sim.transformers)."""

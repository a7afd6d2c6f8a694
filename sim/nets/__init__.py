"""The 2-D networks of the classification lab: the compiled engine (fastnet), its trainer, metrics and losses."""

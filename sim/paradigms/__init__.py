"""Paradigms of learning (the assistant lab's first section): a discriminative model P(y|x) and a generative one
P(x|y)P(y) fitted to the same 2-D data, the (context, next token) pairs a text labels itself with, and a bandit
that learns from a reward instead of a label."""

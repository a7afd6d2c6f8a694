"""Sequence models, for the sequence-models lab: recurrent cells written out (an RNN, an LSTM with its gates) and
the masks of sparse attention (sliding window, dilated, Longformer's global + local, BigBird's random + window +
global) with what they cost and how far they reach."""

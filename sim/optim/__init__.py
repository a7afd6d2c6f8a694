"""The optimisers lab: update rules on loss surfaces, the live race on a real model, Muon."""

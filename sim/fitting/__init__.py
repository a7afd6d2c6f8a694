"""Regression and generalisation labs: least squares and gradient descent, splits, cross-validation, leakage,
fitting curves."""

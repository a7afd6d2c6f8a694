"""Vectors and matrices, for the foundations lab: norms, dot product, projection and cosine of 2-D vectors
(vectors.py), 2×2 matrices as maps of the plane (matrices.py), and what a matrix product costs and takes here
(matmul.py)."""

"""The tiny transformer and its parts: attention (attention lab), the shape chain (shape lab), blocks, norms and MoE
(blocks lab)."""

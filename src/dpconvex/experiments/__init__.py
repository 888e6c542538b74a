"""Reproductions of figures from the papers dpconvex implements (one module per paper)."""

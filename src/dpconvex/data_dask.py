"""Deprecated import path: the module is :mod:`dpconvex.data.dask_data`."""

from dpconvex._moved import alias

alias(__name__)

"""Data access: the checks every training set passes, and the Dask back end.

Layer: above :mod:`dpconvex.objectives`, below :mod:`dpconvex.mechanisms`.  Modules:
:mod:`.checks` (finiteness, shapes, the norm and label bounds, the privacy budget's arguments),
:mod:`.dask_data` (:class:`~dpconvex.data.dask_data.DaskData`, gradient sums on a cluster) and
:mod:`.dask_blocks` (what runs on each worker).
"""

"""Poisson CP factorization of a 3-way count tensor, in one folder: the model
(:mod:`~lpp.inference.models.cp.model`: :class:`CPTensorModel`) and its compiled allocation
(:mod:`~lpp.inference.models.cp.kernels`).
"""
from lpp.inference.models.cp.model import CPTensorModel

__all__ = ["CPTensorModel"]

"""Selective state-space models (Mamba's core), for the sequence-models lab: the selective scan, as a recurrence
and as a parallel scan."""
from sim.ssm.scan import selective_scan

__all__ = ["selective_scan"]

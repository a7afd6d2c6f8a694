"""The GPU lab's engine: attention's memory traffic simulated, measured and reported.

Submodules (importers use them directly; this package re-exports nothing):
- memsim: the IO simulator (bytes one attention forward pass moves between HBM, L2 and SRAM).
- sweeps: sweeps over N and SRAM size built on memsim.
- kernels: the attention implementations (naive, tiled in torch, fused in Triton).
- calls: inputs and one call of an implementation by name (shared by measure and ncu).
- measure: device detection and attention measurement (time, peak memory, the memory and time guards).
- ncu: Nsight Compute counters of one call, profiled in a subprocess (`python -m sim.gpu.ncu`).
- bench: the measurement set run by `python -m benchmarks gpu`.
- report: measurement reports (bundled and uploaded) loaded and checked.

Import order, with no cycle: calls -> kernels; ncu -> calls; measure -> calls, ncu; report -> measure;
sweeps -> memsim; bench -> measure, memsim, ncu.
"""

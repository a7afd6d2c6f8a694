"""IO simulator: the bytes one attention forward pass moves between HBM, an optional L2 and on-chip SRAM.

Counts are exact for the model described here, per (batch, head), for Q, K, V, O of shape (N, d):
- naive: three kernels, S = Q Kᵀ·scale, P = softmax(S), O = P V; each reads its inputs once from HBM and
  writes its output once (an ideal library kernel: real matmuls re-read operand tiles from L2, which
  `gemm_rereads` counts for the comparison with measured counters). Causal adds a
  fourth between the first two, as sim.gpu.kernels.naive runs it: the mask reads S and writes it back (the N×N
  boolean mask itself, a byte per element read once, is left out).
- tiled: a hybrid of the two FlashAttention papers. The block sizes follow FlashAttention-1's rule (Dao et al.
  2022, Algorithm 1: B_n = M/4d, B_m = min(B_n, d); see default_blocks); the loop order is FlashAttention-2's
  (Dao 2023): the outer loop runs over query blocks, one program per row block of B_m query rows, which reads
  its Q block, then the K and V blocks of B_n rows it needs, keeps S, the running max and sum and the O
  accumulator on chip, and writes its O block once (FlashAttention-1's outer loop runs over K/V blocks
  instead, re-reading and re-writing O). No logsumexp is written (inference forward).
Totals come from closed forms per block (fast for any N); the step-by-step `events` and the L2 come from
replaying the schedule of tiles.
"""
from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from sim.core.errors import CodedError

ALGOS = ("naive", "tiled")
ERROR_CODES = ("sram_too_small", "not_positive", "unknown_algo")
MAX_EVENTS = 4000  # longest animation the page plays; larger sizes get totals only
DEFAULT_BLOCK = 64  # block size when no SRAM capacity is given (the kernels' default)
# output tile of a library matrix product (cuBLAS on an H200 picked 256 × 128 and 64 × 128 to 64 × 512 at these sizes):
# the naive kernels' operand re-reads from L2 (gemm_rereads)
GEMM_TILE = 128


class MemsimError(CodedError):
    """A configuration the model refuses: `code` names the reason, `params` fills the translated message."""

    CODES = ERROR_CODES


@dataclass(frozen=True)
class Event:
    """One step of the animation, for the first (batch, head): a tile moves, or blocks are computed."""

    kernel: str  # naive: "qk", "mask" (causal), "softmax", "pv"; tiled: "fused"
    action: str  # "load" (HBM → (L2 →) SRAM), "compute", "skip" (blocks the causal mask leaves out), "store"
    tensor: str  # "Q", "K", "V", "S", "P" or "O"
    row_block: int | None  # block of query rows (Q, S, P, O), or the program's row block for K, V loads
    col_block: int | None  # block of key rows (K, V) or of S columns; None for whole rows
    hbm_bytes: int  # bytes over the HBM link (a load that hits L2 moves none)
    l2_bytes: int  # bytes between L2 and the SM (0 without an L2)
    sram_bytes: int  # bytes into or out of SRAM
    l2_hit: bool | None  # None without an L2, or for computes
    cells: tuple[tuple[int, int], ...] = ()  # (row block, column block) cells of the N×N grid this step changes
    state: str | None = None  # their new state: "computed" (on chip), "skipped" (masked), "written" (in HBM)


@dataclass(frozen=True)
class IOReport:
    """Traffic of one attention forward pass over all (batch, head) pairs, in bytes."""

    algo: str
    N: int
    d: int
    batch_heads: int
    dtype_bytes: int
    causal: bool
    block_m: int  # rows of Q per block (naive: the granularity of the tiles replayed for L2 and events)
    block_n: int  # rows of K and V per block
    hbm_read_bytes: int
    hbm_write_bytes: int
    l2_read_bytes: int | None  # bytes the SMs read through L2; None without an L2
    hbm_read_by_tensor: dict[str, int]  # e.g. {"Q": ..., "K": ..., "V": ...}
    hbm_write_by_tensor: dict[str, int]
    sram_bytes_needed: int | None  # tiled: the four tiles of Algorithm 1; naive: None (library kernels' choice)
    flops: int  # matmul FLOPs actually performed (2 per multiply-add; blocks skipped by the mask excluded)
    l2_bytes: int | None  # L2 capacity modelled
    n_sm: int  # programs per wave
    events_total: int  # steps of the full animation for one (batch, head)
    events: tuple[Event, ...] = field(default=(), repr=False)  # empty when events_total > the cap

    @property
    def hbm_bytes(self) -> int:
        return self.hbm_read_bytes + self.hbm_write_bytes

    @property
    def read_elements_per_head(self) -> int:
        """HBM elements read for one (batch, head)."""
        return self.hbm_read_bytes // (self.dtype_bytes * self.batch_heads)

    @property
    def write_elements_per_head(self) -> int:
        """HBM elements written for one (batch, head)."""
        return self.hbm_write_bytes // (self.dtype_bytes * self.batch_heads)

    @property
    def t_r(self) -> int:
        """Query (row) blocks: ⌈N/B_m⌉."""
        return _Grid.of(self).t_r

    @property
    def t_c(self) -> int:
        """Key/value (column) blocks: ⌈N/B_n⌉."""
        return _Grid.of(self).t_c

    @property
    def events_omitted(self) -> bool:
        """True when the animation was left out: longer than the cap (MAX_EVENTS, or the caller's max_events)."""
        return len(self.events) < self.events_total


@dataclass(frozen=True)
class _Grid:
    """Block geometry of one (batch, head): sizes of every row and column block."""

    N: int
    d: int
    block_m: int
    block_n: int
    causal: bool

    @classmethod
    def of(cls, report: IOReport) -> _Grid:
        return cls(report.N, report.d, report.block_m, report.block_n, report.causal)

    @property
    def t_r(self) -> int:
        return -(-self.N // self.block_m)

    @property
    def t_c(self) -> int:
        return -(-self.N // self.block_n)

    def rows(self) -> np.ndarray:
        """(T_r,) rows in each row block; the last one is partial when B_m does not divide N."""
        return np.minimum(self.block_m, self.N - self.block_m * np.arange(self.t_r))

    def cols(self) -> np.ndarray:
        """(T_c,) rows of K and V in each column block."""
        return np.minimum(self.block_n, self.N - self.block_n * np.arange(self.t_c))

    def blocks_needed(self) -> np.ndarray:
        """(T_r,) column blocks row block i computes: all, or (causal) those with a key <= its last query."""
        if not self.causal:
            return np.full(self.t_r, self.t_c)
        last_row = np.minimum(self.block_m * (np.arange(self.t_r) + 1), self.N) - 1
        return last_row // self.block_n + 1

    def kv_rows(self) -> np.ndarray:
        """(T_r,) rows of K (and of V) row block i reads."""
        return np.minimum(self.blocks_needed() * self.block_n, self.N)


class _LRU:
    """An L2 cache at tile granularity: least recently used tiles are evicted first. Written tiles are dirty until
    evicted; `on_evict_dirty(key, size)` hears of each one written back (write-back cache)."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.used = capacity, 0
        self.tiles: OrderedDict[tuple, int] = OrderedDict()
        self.dirty: set[tuple] = set()
        self.on_evict_dirty = lambda key, size: None

    def access(self, key: tuple, size: int, write: bool = False) -> bool:
        """Touch a tile (read, or write-allocate: a written tile is dirty); True on a hit. A tile larger than the
        cache streams through it."""
        hit = key in self.tiles
        if hit:
            self.tiles.move_to_end(key)
        elif size <= self.capacity:  # a tile larger than the cache streams through it
            self.tiles[key] = size
            self.used += size
            while self.used > self.capacity:
                old, old_size = self.tiles.popitem(last=False)
                self.used -= old_size
                if old in self.dirty:
                    self.dirty.discard(old)
                    self.on_evict_dirty(old, old_size)
        else:
            return False
        if write:
            self.dirty.add(key)
        return hit

    def clear(self) -> None:
        """Empty the cache, as ncu's flush before each kernel: the dirty tiles reach HBM then, in no kernel."""
        self.tiles.clear()
        self.dirty.clear()
        self.used = 0

    def fits_both(self, a: int, b: int) -> bool:
        return a + b <= self.capacity


class _Tally:
    """Accumulates traffic per tensor and, for the first (batch, head), the events.

    `per_kernel` counts a write as HBM traffic when its tile leaves the L2 during the kernel, as a profiler that
    flushes the L2 between kernels sees it: what is still in L2 when the kernel ends is written back by the flush,
    outside every kernel's count. Otherwise every written byte counts (it reaches HBM sooner or later)."""

    def __init__(self, lru: _LRU | None, want_events: bool, per_kernel: bool = False) -> None:
        self.lru, self.want_events = lru, want_events
        self.per_kernel = per_kernel and lru is not None
        self.reads: dict[str, int] = {}  # HBM reads per tensor
        self.writes: dict[str, int] = {}
        self.l2_reads = 0
        self.events: list[Event] = []
        if self.per_kernel:
            lru.on_evict_dirty = lambda key, size: self._written(key[0], size)

    def _written(self, tensor: str, size: int) -> None:
        self.writes[tensor] = self.writes.get(tensor, 0) + size

    def animates(self, head: int) -> bool:
        return self.want_events and head == 0

    def load(self, kernel: str, tensor: str, key: tuple, size: int, row: int | None, col: int | None,
             head: int, hit: bool | None = None) -> None:
        """A tile read by an SM: from L2 on a hit, else from HBM (through L2 when there is one)."""
        if self.lru is not None and hit is None:
            hit = self.lru.access((tensor, head, *key), size)
        hbm = 0 if hit else size
        self.reads[tensor] = self.reads.get(tensor, 0) + hbm
        self.l2_reads += size if self.lru is not None else 0
        if self.animates(head):
            self.events.append(Event(kernel, "load", tensor, row, col, hbm, size if self.lru is not None else 0,
                                     size, hit))

    def store(self, kernel: str, tensor: str, key: tuple, size: int, row: int, head: int,
              cells: tuple[tuple[int, int], ...] = ()) -> None:
        """A tile written to HBM: every written byte reaches HBM (write-back), and it stays in L2 for reuse."""
        if self.lru is not None:
            self.lru.access((tensor, head, *key), size, write=True)
        if not (self.per_kernel and size <= self.lru.capacity):  # counted now, or when the L2 evicts it
            self._written(tensor, size)
        if self.animates(head):
            self.events.append(Event(kernel, "store", tensor, row, None, size, size if self.lru is not None else 0,
                                     size, None, cells, "written" if cells else None))

    def note(self, kernel: str, action: str, tensor: str, row: int, col: int | None, head: int,
             cells: tuple[tuple[int, int], ...], state: str) -> None:
        if self.animates(head):
            self.events.append(Event(kernel, action, tensor, row, col, 0, 0, 0, None, cells, state))


def default_blocks(d: int, sram_bytes: int, dtype_bytes: int) -> tuple[int, int]:
    """(B_m, B_n) from FlashAttention-1's Algorithm 1 (Dao et al. 2022): B_n = M/4d, B_m = min(B_n, d), M the
    SRAM size in elements. Only the block sizes come from FlashAttention-1: the loop order that uses them is
    FlashAttention-2's (outer loop over query blocks, _replay_tiled).

    The paper writes ⌈M/4d⌉; the floor is taken here so that the four tiles really fit in M.
    """
    block_n = sram_bytes // dtype_bytes // (4 * d)
    if block_n < 1:
        raise MemsimError("sram_too_small", {"needed": 4 * d * dtype_bytes, "available": sram_bytes,
                                             "block_m": 1, "block_n": 1, "d": d})
    return min(block_n, d), block_n


def query_block_cap_sram(d: int, dtype_bytes: int) -> int:
    """The smallest SRAM (bytes) at which Algorithm 1's query block reaches its cap B_m = d: M = 4d² elements.

    Past it a bigger SRAM only lengthens the K/V blocks, so the number of K/V passes stops falling.
    """
    return 4 * d * d * dtype_bytes


def block_sizes(algo: str, d: int, dtype_bytes: int, block_m: int | None, block_n: int | None,
                sram_bytes: int | None) -> tuple[int, int]:
    """(B_m, B_n) used: the caller's, else (tiled, with an SRAM size) Algorithm 1's rule, else 64."""
    if sram_bytes is not None and algo == "tiled" and not (block_m and block_n):
        paper_m, paper_n = default_blocks(d, sram_bytes, dtype_bytes)
    else:
        paper_m = paper_n = DEFAULT_BLOCK
    return block_m or paper_m, block_n or paper_n


def tiled_sram_bytes(d: int, block_m: int, block_n: int, dtype_bytes: int) -> int:
    """SRAM the tiles of Algorithm 1 occupy: Q_i and O_i (B_m×d), K_j and V_j (B_n×d).

    As in the paper's accounting, S_ij (B_m×B_n) and the row statistics m, ℓ are not counted: FlashAttention-2
    keeps them in registers.
    """
    return (2 * block_m + 2 * block_n) * d * dtype_bytes


def _events_total(algo: str, grid: _Grid) -> int:
    """Steps the animation of one (batch, head) has, without building them (same structure as the replay)."""
    if algo == "naive":  # K and V tiles; per row block: load, compute, store in 3 kernels (4 with the mask)
        return 2 * grid.t_c + (12 if grid.causal else 9) * grid.t_r
    needed = grid.blocks_needed()
    # per program: load Q, (load K, load V, compute) per needed block, one skip step if any, store O
    return int((2 + 3 * needed + (needed < grid.t_c)).sum())


def _replay_naive(grid: _Grid, heads: int, dtype_bytes: int, tally: _Tally, flush_per_kernel: bool) -> None:
    """The three kernels (four with the causal mask) in launch order, each over all heads: row tiles of B_m rows,
    K and V tiles of B_n rows.

    Between kernels S and P can stay in L2 for the next one, unless the cache is flushed at each kernel's start.
    """
    rows, cols, d, N = grid.rows() * dtype_bytes, grid.cols() * dtype_bytes, grid.d, grid.N
    # the cells each row tile changes, for the animation only (T_r × T_c tuples: millions at large N)
    row_cells = [tuple((i, j) for j in range(grid.t_c)) for i in range(grid.t_r)] if tally.want_events else None
    kernels = (("qk", "Q", "S", "K"),) + ((("mask", "S", "S", None),) if grid.causal else ())
    for kernel, inp, out, other in kernels + (("softmax", "S", "P", None), ("pv", "P", "O", "V")):
        width_in = N if inp in "SP" else d  # S and P rows are N wide, Q rows d wide
        width_out = N if out in "SP" else d
        cells_of = (lambda i: row_cells[i]) if out in "SP" and row_cells else (lambda i: ())
        if flush_per_kernel and tally.lru is not None:
            tally.lru.clear()
        for h in range(heads):
            if other:  # the whole of K (or V) is read once per head
                for j, size in enumerate(cols):
                    tally.load(kernel, other, (j,), int(size) * d, None, j, h)
            for i, size in enumerate(rows):
                tally.load(kernel, inp, (i,), int(size) * width_in, i, None, h)
                tally.note(kernel, "compute", out, i, None, h, cells_of(i), "computed")
                tally.store(kernel, out, (i,), int(size) * width_out, i, h, cells_of(i))


def _replay_tiled(grid: _Grid, heads: int, dtype_bytes: int, n_sm: int, tally: _Tally) -> None:
    """Programs (head, row block) launched row block fastest, in waves of n_sm running in lockstep.

    FlashAttention-2's loop order: the outer loop is over query (row) blocks, each program loading its Q block
    once and storing its O block once; the inner loop streams K_j, V_j. The block sizes are FlashAttention-1's
    rule (default_blocks).

    At step j every program of the wave that still needs block j reads K_j and V_j. Programs of one head read
    the same tiles: when K_j and V_j fit in L2 together, the first of them may miss and the others hit.
    """
    rows, cols, needed, d = grid.rows(), grid.cols(), grid.blocks_needed(), grid.d
    programs = [(h, i) for h in range(heads) for i in range(grid.t_r)]
    lru = tally.lru
    for start in range(0, len(programs), n_sm):
        wave = programs[start:start + n_sm]
        groups: dict[int, list[int]] = {}  # head -> its row blocks in this wave (consecutive in launch order)
        for h, i in wave:
            groups.setdefault(h, []).append(i)
            tally.load("fused", "Q", (i,), int(rows[i]) * d * dtype_bytes, i, None, h)
            if needed[i] < grid.t_c and tally.animates(h):
                skipped = tuple((i, j) for j in range(needed[i], grid.t_c))
                tally.note("fused", "skip", "S", i, None, h, skipped, "skipped")
        needs = {h: [int(needed[i]) for i in members] for h, members in groups.items()}
        ending: dict[int, list[tuple[int, int]]] = {}  # step -> programs that finish with it
        for h, i in wave:
            ending.setdefault(int(needed[i]) - 1, []).append((h, i))
        for j in range(max(max(n) for n in needs.values())):
            size = int(cols[j]) * d * dtype_bytes
            shared = lru is not None and lru.fits_both(size, size)
            for h, members in groups.items():
                # row blocks ascend and need ascending numbers of blocks: those still active are a suffix
                active = members[bisect.bisect_right(needs[h], j):]
                if not active:
                    continue
                if shared and not tally.animates(h):  # the first program asks the cache, the others hit
                    for tensor in ("K", "V"):
                        tally.load("fused", tensor, (j,), size, active[0], j, h)
                    tally.l2_reads += 2 * size * (len(active) - 1)
                    continue
                for n, i in enumerate(active):
                    for tensor in ("K", "V"):
                        tally.load("fused", tensor, (j,), size, i, j, h, True if shared and n > 0 else None)
                    tally.note("fused", "compute", "S", i, j, h, ((i, j),), "computed")
            for h, i in ending.get(j, ()):  # this program's last block: O leaves the chip
                tally.store("fused", "O", (i,), int(rows[i]) * d * dtype_bytes, i, h)


def attention_io(algo: str, N: int, d: int, *, batch_heads: int = 1, dtype_bytes: int = 2, causal: bool = False,
                 block_m: int | None = None, block_n: int | None = None, sram_bytes: int | None = None,
                 l2_bytes: int | None = None, n_sm: int | None = None, l2_flush_per_kernel: bool = False,
                 max_events: int = MAX_EVENTS) -> IOReport:
    """Bytes moved per memory level by one attention forward pass (see the module docstring for the model).

    Block sizes default to Algorithm 1's rule for `sram_bytes`, or 64×64 without one; blocks that do not fit in
    `sram_bytes` raise MemsimError("sram_too_small"). `l2_bytes` adds an LRU L2 with waves of `n_sm` programs;
    `l2_flush_per_kernel` empties it as each kernel starts, as ncu's `--cache-control all` does when it measures.
    """
    if algo not in ALGOS:
        raise MemsimError("unknown_algo", {"algo": algo})
    for name, value in (("N", N), ("d", d), ("batch_heads", batch_heads), ("dtype_bytes", dtype_bytes),
                        ("block_m", block_m), ("block_n", block_n), ("sram_bytes", sram_bytes), ("n_sm", n_sm)):
        if value is not None and value < 1:
            raise MemsimError("not_positive", {"name": name, "value": value})
    if l2_bytes is not None and l2_bytes < 0:
        raise MemsimError("not_positive", {"name": "l2_bytes", "value": l2_bytes})
    block_m, block_n = block_sizes(algo, d, dtype_bytes, block_m, block_n, sram_bytes)
    sram_needed = tiled_sram_bytes(d, block_m, block_n, dtype_bytes) if algo == "tiled" else None
    if sram_bytes is not None and sram_needed is not None and sram_needed > sram_bytes:
        raise MemsimError("sram_too_small", {"needed": sram_needed, "available": sram_bytes,
                                             "block_m": block_m, "block_n": block_n, "d": d})
    grid = _Grid(N, d, block_m, block_n, causal)
    n_sm = n_sm or 1
    events_total = _events_total(algo, grid)
    want_events = events_total <= max_events
    per_elem = dtype_bytes * batch_heads
    if algo == "naive":  # closed form: reads Q, K, S, P, V; writes S, P, O; the causal mask reads and writes S again
        passes = 2 if causal else 1
        reads = {"Q": N * d, "K": N * d, "S": passes * N * N, "P": N * N, "V": N * d}
        writes = {"S": passes * N * N, "P": N * N, "O": N * d}
        flops = 4 * N * N * d  # QKᵀ and PV in full: the mask is applied to a materialised S
    else:  # closed form: each row block reads its Q block, the K and V rows it needs, and writes its O block
        kv = int(grid.kv_rows().sum())
        reads = {"Q": N * d, "K": kv * d, "V": kv * d}
        writes = {"O": N * d}
        flops = 4 * d * int((grid.rows() * grid.kv_rows()).sum())
    reads = {k: v * per_elem for k, v in reads.items()}
    writes = {k: v * per_elem for k, v in writes.items()}
    l2_read = None
    events: tuple[Event, ...] = ()
    if l2_bytes is not None or want_events:
        lru = _LRU(l2_bytes) if l2_bytes is not None else None
        tally = _Tally(lru, want_events, per_kernel=l2_flush_per_kernel)
        heads = batch_heads if lru is not None else 1  # without L2 every head moves the same bytes
        if algo == "naive":
            _replay_naive(grid, heads, dtype_bytes, tally, l2_flush_per_kernel)
        else:
            _replay_tiled(grid, heads, dtype_bytes, n_sm, tally)
        if lru is not None:
            reads, writes, l2_read = tally.reads, tally.writes, tally.l2_reads
        events = tuple(tally.events)
    return IOReport(algo=algo, N=N, d=d, batch_heads=batch_heads, dtype_bytes=dtype_bytes, causal=causal,
                    block_m=block_m, block_n=block_n, hbm_read_bytes=sum(reads.values()),
                    hbm_write_bytes=sum(writes.values()), l2_read_bytes=l2_read, hbm_read_by_tensor=reads,
                    hbm_write_by_tensor=writes, sram_bytes_needed=sram_needed, flops=flops * batch_heads,
                    l2_bytes=l2_bytes, n_sm=n_sm, events_total=events_total, events=events)


def gemm_rereads(N: int, d: int, batch_heads: int, dtype_bytes: int) -> int:
    """Bytes the naive kernels' two matrix products read from L2 beyond the model's once-each: a library kernel
    computes its output in GEMM_TILE-square tiles and reads, for each, the operand rows and columns it needs, so
    Q and K (S = QKᵀ) and V (O = PV) each pass ⌈N/GEMM_TILE⌉ times between L2 and the SMs; P, a whole row block
    per tile, once. All hits in L2: no HBM bytes."""
    return 3 * (-(-N // GEMM_TILE) - 1) * N * d * dtype_bytes * batch_heads


def replay_cost(algo: str, N: int, batch_heads: int, block_m: int, block_n: int, n_sm: int) -> int:
    """About how many tile accesses the L2 replay of attention_io makes (about 1.5 µs each on a 2-core machine).

    The page refuses the L2 model above MAX_REPLAY rather than keep a user (and the server) waiting.
    """
    t_r, t_c = -(-N // block_m), -(-N // block_n)
    if algo == "naive":  # 3 kernels × row tiles, plus K and V tiles, per head
        return batch_heads * (3 * t_r + 2 * t_c)
    return -(-batch_heads * t_r // n_sm) * t_c * 2  # waves × column steps × (about 2) heads per wave


MAX_REPLAY = 1_000_000  # about 1.5 s of replay


def sweep(algo: str, param: str, values: list[int], **config) -> list[IOReport]:
    """attention_io for each value of one parameter (N, d, sram_bytes, block_m, ...), without events."""
    return [attention_io(algo, **{**config, param: value, "max_events": 0}) for value in values]


def tiled_io_law(N: int, d: int, sram_bytes: int, dtype_bytes: int = 2) -> float:
    """The paper's Θ(N²d²/M) HBM accesses of tiled attention, in bytes (M in elements; no constant)."""
    return N * N * d * d / (sram_bytes / dtype_bytes) * dtype_bytes


def arithmetic_intensity(report: IOReport) -> float:
    """FLOPs per byte of HBM traffic."""
    return report.flops / report.hbm_bytes


@dataclass(frozen=True)
class GpuSpec:
    """Published figures of one GPU (dense fp16/bf16 Tensor Core peak, no sparsity)."""

    name: str
    hbm_bytes_per_s: float
    peak_flops: float
    l2_bytes: int
    n_sm: int
    smem_per_sm_bytes: int  # the most shared memory one thread block can use on an SM
    memory_bytes: int


# Sources: NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM: 2,039 GB/s, FP16 tensor 312 TFLOP/s) and the
# NVIDIA A100 architecture whitepaper (108 SMs, 40 MB L2, up to 164 KB shared memory per SM); NVIDIA H100 and H200
# datasheets (SXM: 3.35 TB/s and 4.8 TB/s; FP16 tensor 1,979 TFLOP/s with sparsity, so 989.5 dense) and the NVIDIA
# H100 architecture whitepaper (132 SMs, 50 MB L2, up to 228 KB shared memory per SM). The H200 is the same
# processor as the H100; its 60 MiB L2 is what torch.cuda.get_device_properties reported on an H200 SXM.
GPUS = {
    "A100": GpuSpec("NVIDIA A100 80GB SXM", 2.039e12, 312e12, 40 * 2**20, 108, 164 * 2**10, 80 * 10**9),
    "H100": GpuSpec("NVIDIA H100 SXM", 3.35e12, 989.5e12, 50 * 2**20, 132, 228 * 2**10, 80 * 10**9),
    "H200": GpuSpec("NVIDIA H200 SXM", 4.8e12, 989.5e12, 60 * 2**20, 132, 228 * 2**10, 141 * 10**9),
}


def gpu_for(device_name: str) -> GpuSpec | None:
    """The table's entry for a device name such as "NVIDIA H200", or None for another device."""
    return next((spec for key, spec in GPUS.items() if key in device_name.upper()), None)


@dataclass(frozen=True)
class Roofline:
    """Where one pass sits on a GPU's roofline."""

    intensity: float  # FLOPs per HBM byte
    ridge: float  # intensity at which the GPU turns from memory-bound to compute-bound
    attainable_flops: float  # min(peak, intensity × bandwidth), FLOP/s
    memory_time_s: float  # HBM bytes / bandwidth
    compute_time_s: float  # FLOPs / peak
    bound: str  # "memory" or "compute"

    @property
    def time_s(self) -> float:
        """Lower bound of the pass's time: the slower of moving its bytes and doing its FLOPs."""
        return max(self.memory_time_s, self.compute_time_s)


def roofline(report: IOReport, hbm_bytes_per_s: float, peak_flops: float) -> Roofline:
    intensity = arithmetic_intensity(report)
    memory_s, compute_s = report.hbm_bytes / hbm_bytes_per_s, report.flops / peak_flops
    return Roofline(intensity, peak_flops / hbm_bytes_per_s, min(peak_flops, intensity * hbm_bytes_per_s),
                    memory_s, compute_s, "memory" if memory_s >= compute_s else "compute")


# What the LLM-foundations article (llm-foundations-article, §6.4 "内存层级", and "几十 MB" in §8.1) gives as
# the H100's on-chip SRAM (shared memory / L1): "~50 MB". It is the size of the H100's L2 cache.
ARTICLE_H100_SRAM_BYTES = 50 * 10**6
# What the same article (§6.3) says one Tensor Core 4×4 matrix multiply-accumulate is worth: 64 FLOPs.
ARTICLE_TENSOR_CORE_FLOPS = 64


@dataclass(frozen=True)
class SramClaim:
    """A claimed on-chip SRAM size set against one GPU's table entry."""

    claim_bytes: int
    l2_bytes: int  # the L2 cache, shared by all SMs
    smem_per_sm_bytes: int  # shared memory (the SRAM a thread block tiles into), per SM
    n_sm: int
    smem_total_bytes: int  # shared memory of all SMs together
    closest: str  # the level whose size is nearest the claim (by ratio): "l2", "smem_total" or "smem_per_sm"


def sram_claim(spec: GpuSpec, claim_bytes: int = ARTICLE_H100_SRAM_BYTES) -> SramClaim:
    """Which of a GPU's memories a claimed "SRAM size" matches: for the article's ~50 MB on an H100, the L2."""
    if claim_bytes < 1:
        raise MemsimError("not_positive", {"name": "claim_bytes", "value": claim_bytes})
    total = spec.smem_per_sm_bytes * spec.n_sm
    sizes = {"l2": spec.l2_bytes, "smem_total": total, "smem_per_sm": spec.smem_per_sm_bytes}
    closest = min(sizes, key=lambda k: abs(np.log(sizes[k] / claim_bytes)))
    return SramClaim(claim_bytes, spec.l2_bytes, spec.smem_per_sm_bytes, spec.n_sm, total, closest)


def mma_ops(m: int, n: int, k: int) -> dict[str, int]:
    """Work of one matrix multiply-accumulate D = A·B + C, A m×k, B k×n: m·n·k multiply-adds, 2 FLOPs each.

    A Tensor Core's 4×4 operation (4×4×4) is 64 multiply-adds = 128 FLOPs, counted as the roofline counts.
    """
    for name, value in (("m", m), ("n", n), ("k", k)):
        if value < 1:
            raise MemsimError("not_positive", {"name": name, "value": value})
    return {"m": m, "n": n, "k": k, "madds": m * n * k, "flops": 2 * m * n * k}


def block_rule(d: int, sram_bytes: int, dtype_bytes: int) -> dict[str, int]:
    """FlashAttention-1's block-size rule written out for M = `sram_bytes`: M in elements, B_n, B_m."""
    block_m, block_n = default_blocks(d, sram_bytes, dtype_bytes)
    return {"m_elems": sram_bytes // dtype_bytes, "bn": block_n, "bm": block_m}

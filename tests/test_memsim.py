"""IO simulator against closed forms, brute-force per-block counts and hand-traced L2 cases."""
import math

import pytest

from sim.gpu.memsim import (
    GPUS,
    MAX_EVENTS,
    MemsimError,
    arithmetic_intensity,
    attention_io,
    default_blocks,
    gpu_for,
    query_block_cap_sram,
    roofline,
    sweep,
    tiled_io_law,
    tiled_sram_bytes,
)


@pytest.mark.parametrize("N, d, bh, elem, causal", [(1000, 64, 1, 2, False), (257, 16, 3, 4, True),
                                                    (4096, 128, 8, 2, True)])
def test_naive_matches_the_closed_form(N, d, bh, elem, causal):
    r = attention_io("naive", N, d, batch_heads=bh, dtype_bytes=elem, causal=causal)
    s = 2 if causal else 1  # the causal mask: a pass of its own that reads S and writes it back
    assert r.hbm_read_bytes == (3 * N * d + (s + 1) * N * N) * elem * bh
    assert r.hbm_write_bytes == ((s + 1) * N * N + N * d) * elem * bh
    assert r.hbm_read_by_tensor == {t: n * elem * bh for t, n in
                                    {"Q": N * d, "K": N * d, "S": s * N * N, "P": N * N, "V": N * d}.items()}
    assert r.flops == 4 * N * N * d * bh  # the mask changes nothing: S is materialised in full
    assert r.l2_read_bytes is None and r.sram_bytes_needed is None


@pytest.mark.parametrize("N, d, bm, bn", [(1024, 64, 64, 64), (1000, 64, 64, 48), (100, 32, 64, 64),
                                          (77, 16, 16, 128), (1, 8, 4, 4)])
def test_tiled_without_mask_re_reads_k_and_v_once_per_row_block(N, d, bm, bn):
    r = attention_io("tiled", N, d, batch_heads=2, dtype_bytes=2, block_m=bm, block_n=bn)
    # Q once, K and V once per row block (edge blocks partial, so exactly N rows each time), O once
    assert r.hbm_read_bytes == (N * d + 2 * N * d * math.ceil(N / bm)) * 2 * 2
    assert r.hbm_write_bytes == N * d * 2 * 2
    assert r.flops == 4 * N * N * d * 2
    assert r.sram_bytes_needed == (2 * bm + 2 * bn) * d * 2


def _brute_force_causal(N, d, bm, bn):
    """(K rows read, FLOPs) from the element-wise causal mask, block by block."""
    kv_rows = flops = 0
    for r0 in range(0, N, bm):
        rows = range(r0, min(r0 + bm, N))
        for c0 in range(0, N, bn):
            cols = range(c0, min(c0 + bn, N))
            if any(c <= r for r in rows for c in cols):  # at least one unmasked entry: the block is loaded
                kv_rows += len(cols)
                flops += 4 * d * len(rows) * len(cols)
    return kv_rows, flops


@pytest.mark.parametrize("N", [1, 5, 16, 33, 70])
@pytest.mark.parametrize("bm, bn", [(8, 8), (16, 8), (8, 16), (5, 7)])
def test_causal_tiled_counts_match_a_brute_force_per_block_count(N, bm, bn):
    d = 4
    r = attention_io("tiled", N, d, dtype_bytes=1, causal=True, block_m=bm, block_n=bn)
    kv_rows, flops = _brute_force_causal(N, d, bm, bn)
    assert r.hbm_read_by_tensor == {"Q": N * d, "K": kv_rows * d, "V": kv_rows * d}
    assert r.hbm_write_bytes == N * d and r.flops == flops


def test_causal_tiled_reads_about_half_of_the_unmasked_k_and_v():
    full = attention_io("tiled", 4096, 64, block_m=64, block_n=64)
    causal = attention_io("tiled", 4096, 64, block_m=64, block_n=64, causal=True)
    T = 4096 // 64
    assert causal.hbm_read_by_tensor["K"] == 64 * 64 * 2 * T * (T + 1) // 2  # row block i reads i + 1 blocks
    assert causal.hbm_read_by_tensor["K"] / full.hbm_read_by_tensor["K"] == pytest.approx((T + 1) / (2 * T))


@pytest.mark.parametrize("algo, causal", [("naive", False), ("tiled", False), ("tiled", True)])
def test_events_add_up_to_the_totals_and_mark_every_block(algo, causal):
    N, d, bm, bn = 70, 8, 16, 8
    r = attention_io(algo, N, d, causal=causal, block_m=bm, block_n=bn)
    assert len(r.events) == r.events_total
    assert sum(e.hbm_bytes for e in r.events if e.action == "load") == r.hbm_read_bytes
    assert sum(e.hbm_bytes for e in r.events if e.action == "store") == r.hbm_write_bytes
    t_r, t_c = math.ceil(N / bm), math.ceil(N / bn)
    states: dict[tuple[int, int], set] = {}
    for e in r.events:
        for cell in e.cells:
            states.setdefault(cell, set()).add(e.state)
    assert set(states) == {(i, j) for i in range(t_r) for j in range(t_c)}
    if algo == "naive":
        assert all(s == {"computed", "written"} for s in states.values())
    else:
        for (i, j), s in states.items():  # skipped exactly when every key of block j is after every query of i
            assert s == ({"skipped"} if causal and j * bn > min((i + 1) * bm, N) - 1 else {"computed"})


def test_events_are_left_out_past_the_cap_and_say_so():
    r = attention_io("tiled", 16384, 64)
    assert r.events == () and r.events_total > MAX_EVENTS and r.events_omitted
    assert attention_io("tiled", 64, 16, max_events=0).events_omitted
    assert not attention_io("tiled", 64, 16).events_omitted


def test_default_blocks_follow_algorithm_1_and_fit():
    M = 100 * 1024  # bytes
    bm, bn = default_blocks(64, M, 2)
    assert bn == M // 2 // (4 * 64) and bm == min(bn, 64)
    r = attention_io("tiled", 1024, 64, sram_bytes=M)
    assert (r.block_m, r.block_n) == (bm, bn) and r.sram_bytes_needed <= M
    assert default_blocks(128, 4 * 128 * 2 * 10, 2) == (10, 10)  # small SRAM: B_m = B_n < d


@pytest.mark.parametrize("d,dtype_bytes", [(64, 2), (128, 4), (32, 2)])
def test_query_block_cap_is_the_smallest_sram_where_b_m_reaches_d(d, dtype_bytes):
    knee = query_block_cap_sram(d, dtype_bytes)
    below = next(m for m in range(knee, 0, -dtype_bytes) if default_blocks(d, m, dtype_bytes)[0] < d)
    assert default_blocks(d, knee, dtype_bytes)[0] == d and knee - below == dtype_bytes
    assert knee == tiled_sram_bytes(d, d, d, dtype_bytes)  # the four d×d tiles just fit


def test_blocks_that_do_not_fit_are_refused_with_the_numbers():
    with pytest.raises(MemsimError) as e:
        attention_io("tiled", 1024, 64, sram_bytes=32 * 1024, block_m=128, block_n=128)
    assert e.value.code == "sram_too_small"
    assert e.value.params == {"needed": tiled_sram_bytes(64, 128, 128, 2), "available": 32 * 1024,
                              "block_m": 128, "block_n": 128, "d": 64}
    with pytest.raises(MemsimError, match="sram_too_small"):
        attention_io("tiled", 1024, 64, sram_bytes=4 * 64 * 2 - 1)  # not even one row of each tile
    attention_io("naive", 1024, 64, sram_bytes=1)  # the naive model has no tiles to fit


@pytest.mark.parametrize("kwargs, code", [({"algo": "flash"}, "unknown_algo"), ({"N": 0}, "not_positive"),
                                          ({"block_m": -1}, "not_positive"), ({"l2_bytes": -1}, "not_positive")])
def test_bad_input_gets_an_error_code(kwargs, code):
    with pytest.raises(MemsimError) as e:
        attention_io(**{"algo": "tiled", "N": 64, "d": 16, **kwargs})
    assert e.value.code == code


def test_tiled_bytes_follow_n2_d2_over_m_while_the_row_block_grows_with_m():
    N, d = 4096, 64
    sizes = [4 * d * 2 * b for b in (8, 16, 32, 64)]  # B_m = B_n = M/4d, up to B_m = d
    reports = sweep("tiled", "sram_bytes", sizes, N=N, d=d)
    assert [r.block_m for r in reports] == [8, 16, 32, 64]
    ratios = [r.hbm_bytes / tiled_io_law(N, d, M) for r, M in zip(reports, sizes, strict=True)]
    assert max(ratios) / min(ratios) < 1.05  # a constant times N²d²/M
    naive = sweep("naive", "sram_bytes", sizes, N=N, d=d)
    assert len({r.hbm_bytes for r in naive}) == 1  # Θ(Nd + N²) whatever the SRAM
    # K and V re-read 2N²d/B_m elements against naive's 4N²: tiling wins once B_m > d/2
    assert naive[0].hbm_bytes < reports[0].hbm_bytes and naive[-1].hbm_bytes > reports[-1].hbm_bytes
    grow = sweep("tiled", "N", [1024, 2048, 4096], d=d, block_m=64, block_n=64)
    assert grow[2].hbm_bytes / grow[1].hbm_bytes == pytest.approx(4, rel=0.02)  # quadratic in N, Q and O aside


def test_an_empty_l2_changes_nothing_and_serves_every_read():
    plain = attention_io("tiled", 300, 32, batch_heads=3, causal=True, block_m=32, block_n=16)
    cold = attention_io("tiled", 300, 32, batch_heads=3, causal=True, block_m=32, block_n=16, l2_bytes=0, n_sm=4)
    assert cold.hbm_read_bytes == plain.hbm_read_bytes == cold.l2_read_bytes
    assert cold.hbm_write_bytes == plain.hbm_write_bytes


def test_a_large_l2_leaves_only_compulsory_reads():
    N, d, bh = 512, 64, 4
    r = attention_io("tiled", N, d, batch_heads=bh, l2_bytes=64 * 2**20, n_sm=132)
    assert r.hbm_read_bytes == 3 * N * d * 2 * bh  # Q, K, V once each
    assert r.l2_read_bytes == attention_io("tiled", N, d, batch_heads=bh).hbm_read_bytes  # L2 sees the 2-level reads


def test_lru_l2_on_a_hand_traced_case():
    # N = 4, d = 1, one byte per element, 2×2 blocks: every tile (Q_i, K_j, V_j, O_i) is 2 bytes
    def run(l2, n_sm):
        return attention_io("tiled", 4, 1, dtype_bytes=1, block_m=2, block_n=2, l2_bytes=l2, n_sm=n_sm)

    # one program at a time: Q0 K0 V0 K1 V1 (O0) Q1 K0 V0 K1 V1 (O1); with 8 or 10 bytes LRU always evicts the tile
    # needed next (a cyclic sweep longer than the cache), so all 12 loads miss
    for l2 in (8, 10):
        assert (run(l2, 1).hbm_read_bytes, run(l2, 1).l2_read_bytes) == (20, 20)
    # 12 bytes: after program 0 the cache holds K0 V0 K1 V1 O0; Q1 evicts Q0, and the four K, V loads hit
    assert run(12, 1).hbm_read_bytes == 12
    # both programs in one wave: each K_j, V_j is read once for the two, so 8 bytes are enough
    assert (run(8, 2).hbm_read_bytes, run(8, 2).l2_read_bytes) == (12, 20)
    hits = [e.l2_hit for e in run(8, 2).events if e.action == "load"]
    assert hits == [False, False] + [False, False, True, True] * 2  # Q0 Q1, then per step K V (program 0) K V (1)


def test_the_wave_shortcut_agrees_with_the_step_by_step_replay():
    kwargs = dict(batch_heads=2, causal=True, block_m=16, block_n=16, l2_bytes=6000, n_sm=3)
    detailed = attention_io("tiled", 100, 16, **kwargs)  # head 0 replayed program by program (events)
    shortcut = attention_io("tiled", 100, 16, **kwargs, max_events=0)
    assert detailed.events and not shortcut.events
    assert (detailed.hbm_read_bytes, detailed.l2_read_bytes) == (shortcut.hbm_read_bytes, shortcut.l2_read_bytes)


def test_naive_s_and_p_stay_in_a_large_l2_unless_it_is_flushed_per_kernel():
    N, d = 256, 64
    warm = attention_io("naive", N, d, l2_bytes=64 * 2**20)
    assert warm.hbm_read_bytes == 3 * N * d * 2  # S and P read back from L2
    cold = attention_io("naive", N, d, l2_bytes=64 * 2**20, l2_flush_per_kernel=True)
    assert cold.hbm_read_bytes == attention_io("naive", N, d).hbm_read_bytes


def test_arithmetic_intensity_and_roofline():
    N, d = 2048, 64
    naive, tiled = attention_io("naive", N, d), attention_io("tiled", N, d)
    assert arithmetic_intensity(naive) == 4 * N * N * d / ((4 * N * d + 4 * N * N) * 2)
    assert arithmetic_intensity(tiled) > arithmetic_intensity(naive)
    h = GPUS["H100"]
    line = roofline(naive, h.hbm_bytes_per_s, h.peak_flops)
    assert line.ridge == pytest.approx(989.5e12 / 3.35e12) and line.bound == "memory"
    assert line.time_s == pytest.approx(naive.hbm_bytes / 3.35e12)
    assert line.attainable_flops == pytest.approx(arithmetic_intensity(naive) * 3.35e12)
    fast = roofline(tiled, h.hbm_bytes_per_s, 1e9)  # a slow chip: compute-bound
    assert fast.bound == "compute" and fast.time_s == pytest.approx(tiled.flops / 1e9)


def test_gpu_table_lookup():
    assert gpu_for("NVIDIA H200") is GPUS["H200"] and gpu_for("NVIDIA A100-SXM4-80GB") is GPUS["A100"]
    assert gpu_for("Intel Xeon") is None


@pytest.mark.parametrize("causal", [False, True])
def test_naive_elements_per_head_are_the_closed_form_the_page_explains(causal):
    """3Nd + 2N² read (Q, K, V; S and P once each) and 2N² + Nd written (S, P, O), for each (batch, head); the
    causal mask reads and writes S once more."""
    N, d, s = 1000, 64, 3 if causal else 2
    r = attention_io("naive", N, d, batch_heads=3, dtype_bytes=2, causal=causal, sram_bytes=228 * 1024, n_sm=132,
                     max_events=0)
    assert (r.read_elements_per_head, r.write_elements_per_head) == (3 * N * d + s * N ** 2, s * N ** 2 + N * d)


def test_a_library_matmul_re_reads_its_operands_once_per_output_tile():
    """Q and K (S = QKᵀ) and V (O = PV) pass ⌈N/128⌉ times between L2 and the SMs: the first pass is the model's
    once-each, the rest are gemm_rereads; a size of one tile re-reads nothing."""
    from sim.gpu.memsim import GEMM_TILE, gemm_rereads

    assert GEMM_TILE == 128 and gemm_rereads(128, 64, 16, 2) == 0 and gemm_rereads(1, 8, 1, 4) == 0
    assert gemm_rereads(129, 64, 1, 2) == 3 * 129 * 64 * 2
    assert gemm_rereads(4096, 64, 16, 2) == 3 * 31 * (4096 * 64 * 2 * 16)  # 31 more passes of Q, K and V (8 MiB each)

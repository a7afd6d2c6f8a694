"""The animation's payload against closed forms and a brute-force causal mask; the view in both languages."""
import math

import pytest
from streamlit.testing.v1 import AppTest

from sim.gpu.memsim import MAX_EVENTS, attention_io
from sim.plots.memsim_anim import animation_payload, largest_animated_n
from ui.i18n import catalogue

LABELS = {"play": "Play"}


def final(payload: dict) -> dict[str, int]:
    return {name: values[-1] for name, values in payload["counters"].items()}


def grid_after(payload: dict) -> dict[tuple[int, int], str]:
    """State of every block once all steps are played, replaying the payload's cell runs."""
    states = {(i, j): "todo" for i in range(payload["t_r"]) for j in range(payload["t_c"])}
    ev = payload["events"]
    for run, state in zip(ev["cells"], ev["state"], strict=True):
        if run:
            for j in range(run[1], run[2]):
                states[run[0], j] = payload["states"][state]
    return states


@pytest.mark.parametrize("N, d, bm, bn, elem, causal", [(256, 64, 64, 64, 2, False), (1000, 32, 64, 48, 2, True),
                                                        (77, 16, 16, 128, 4, False), (1, 8, 4, 4, 2, False)])
def test_naive_counters_end_at_the_closed_form(N, d, bm, bn, elem, causal):
    p = animation_payload(attention_io("naive", N, d, batch_heads=3, dtype_bytes=elem, causal=causal,
                                       block_m=bm, block_n=bn), LABELS)
    s = 3 if causal else 2  # N×N passes: S and P (and the causal mask's of S)
    reads, writes = (3 * N * d + s * N * N) * elem, (s * N * N + N * d) * elem  # per (batch, head)
    assert final(p) == {"hbm_read": reads, "hbm_write": writes, "l2": 0, "sram": reads + writes}
    assert (p["t_r"], p["t_c"]) == (math.ceil(N / bm), math.ceil(N / bn))
    assert p["tensors"] == ["Q", "K", "V", "O", "S", "P"] and not p["l2"] and p["labels"] == LABELS
    assert set(grid_after(p).values()) == {"written"}  # S and P go to HBM, mask or not


@pytest.mark.parametrize("N, d, bm, bn", [(1024, 64, 64, 128), (1000, 64, 64, 48), (100, 32, 64, 64), (5, 8, 4, 4)])
def test_tiled_counters_without_mask_end_at_the_closed_form(N, d, bm, bn):
    p = animation_payload(attention_io("tiled", N, d, dtype_bytes=2, block_m=bm, block_n=bn), LABELS)
    t_r = math.ceil(N / bm)
    reads, writes = (N * d + 2 * t_r * N * d) * 2, N * d * 2  # Q once, K and V once per row block, O once
    assert final(p) == {"hbm_read": reads, "hbm_write": writes, "l2": 0, "sram": reads + writes}
    assert set(grid_after(p).values()) == {"computed"}  # S never leaves the chip
    assert p["tensors"] == ["Q", "K", "V", "O"]


def test_counters_rise_step_by_step_with_the_events():
    p = animation_payload(attention_io("tiled", 300, 16, causal=True, block_m=32, block_n=64), LABELS)
    ev, c = p["events"], p["counters"]
    assert p["steps"] == len(ev["action"]) == len(ev["tensor"]) == len(c["hbm_read"]) == p["events_total"]
    for k, action in enumerate(ev["action"]):
        before = {name: values[k - 1] if k else 0 for name, values in c.items()}
        grew = {name: values[k] - before[name] for name, values in c.items()}
        moved = ev["sram"][k]
        assert grew == {"hbm_read": moved if action == "load" else 0, "hbm_write": moved if action == "store" else 0,
                        "l2": 0, "sram": moved}, k


@pytest.mark.parametrize("N, bm, bn", [(256, 64, 64), (70, 16, 8), (70, 8, 16), (33, 5, 7), (1, 4, 4)])
def test_causal_skips_exactly_the_blocks_with_no_unmasked_entry(N, bm, bn):
    p = animation_payload(attention_io("tiled", N, 4, dtype_bytes=1, causal=True, block_m=bm, block_n=bn), LABELS)
    fully_masked = {(r0 // bm, c0 // bn) for r0 in range(0, N, bm) for c0 in range(0, N, bn)
                    if all(c > r for r in range(r0, min(r0 + bm, N)) for c in range(c0, min(c0 + bn, N)))}
    states = grid_after(p)
    assert {cell for cell, s in states.items() if s == "skipped"} == fully_masked
    assert {cell for cell, s in states.items() if s == "computed"} == set(states) - fully_masked


def test_an_l2_that_holds_everything_reads_each_input_once_from_hbm():
    N, d, bm, bn = 300, 16, 32, 64
    for algo in ("naive", "tiled"):
        plain = final(animation_payload(attention_io(algo, N, d, block_m=bm, block_n=bn), LABELS))
        report = attention_io(algo, N, d, block_m=bm, block_n=bn, l2_bytes=2**30, n_sm=4)
        cached = animation_payload(report, LABELS)
        end = final(cached)
        assert cached["l2"] and end["hbm_read"] == 3 * N * d * 2 < plain["hbm_read"]  # Q, K, V once each
        assert end["hbm_write"] == plain["hbm_write"]  # every write still reaches HBM
        assert end["l2"] == plain["hbm_read"] + plain["hbm_write"]  # what HBM served before now passes L2
        assert end["l2"] == report.l2_read_bytes + report.hbm_write_bytes
        assert (end["hbm_read"], end["hbm_write"]) == (report.hbm_read_bytes, report.hbm_write_bytes)
        assert True in cached["events"]["hit"]


def test_a_small_l2_never_reads_more_from_hbm_than_none():
    for algo, causal in (("naive", False), ("tiled", False), ("tiled", True)):
        plain = final(animation_payload(attention_io(algo, 512, 64, causal=causal, block_m=64, block_n=64), LABELS))
        report = attention_io(algo, 512, 64, causal=causal, block_m=64, block_n=64, l2_bytes=48 * 1024, n_sm=2)
        end = final(animation_payload(report, LABELS))
        assert end["hbm_read"] <= plain["hbm_read"] and end["hbm_write"] == plain["hbm_write"]
        assert end["l2"] == report.l2_read_bytes + report.hbm_write_bytes


def test_same_configuration_same_id_and_another_one_a_new_id():
    a = animation_payload(attention_io("tiled", 256, 64, block_m=64, block_n=64), {"play": "Play"})
    b = animation_payload(attention_io("tiled", 256, 64, block_m=64, block_n=64), {"play": "播放"})
    c = animation_payload(attention_io("tiled", 256, 64, block_m=64, block_n=64, causal=True), LABELS)
    assert a["id"] == b["id"] != c["id"]


def test_too_long_animations_are_omitted_and_the_largest_size_that_animates_is_proposed():
    report = attention_io("naive", 50_000, 64, block_m=64, block_n=64)
    p = animation_payload(report, LABELS)
    assert p["omitted"] and "events" not in p and "counters" not in p
    # naive: 2 T_c + 9 T_r = 11 ⌈N/64⌉ steps
    assert largest_animated_n(report) == (MAX_EVENTS // 11) * 64
    # tiled without mask: T_r (2 + 3 T_c) steps
    tiled = attention_io("tiled", 4096, 64, block_m=64, block_n=64)
    steps = lambda n: math.ceil(n / 64) * (2 + 3 * math.ceil(n / 64))  # noqa: E731
    best = max(n for n in range(1, 4097) if steps(n) <= MAX_EVENTS)
    assert tiled.events_omitted and largest_animated_n(tiled) == best


def _script():
    import streamlit as st

    from labs.gpu.memsim_view import show_animation
    from sim.gpu.memsim import attention_io

    st.session_state["lang"] = st.query_params.get("lang", "en")
    N = int(st.query_params.get("N", "256"))
    show_animation(attention_io(st.query_params.get("algo", "tiled"), N, 64, causal=True, block_m=64, block_n=64,
                                l2_bytes=2**20, n_sm=8), speed=20, key="gpu.anim")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("algo", ["naive", "tiled"])
def test_the_view_runs_and_says_when_a_size_is_too_large(lang, algo):
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params.update({"lang": lang, "algo": algo})
    at.run()
    assert not at.exception and not at.info
    at.query_params["N"] = "60000"
    at.run()
    assert not at.exception
    # naive, causal: 2 T_c + 12 T_r steps (K and V tiles; load, compute, store in four kernels, the mask's too)
    steps = 14 * math.ceil(60_000 / 64) if algo == "naive" else None
    message = at.info[0].value
    assert "60,000" in message and f"{MAX_EVENTS:,}" in message
    if steps:
        assert f"{steps:,}" in message and f"{(MAX_EVENTS // 14) * 64:,}" in message
    assert message.startswith(catalogue(lang)["gpu.anim.too_large"].split("{")[0])

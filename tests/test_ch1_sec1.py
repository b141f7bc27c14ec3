"""Chapter "Collective communication", purpose page and §1.1 (commbook.book.ch1.parallelism_figures).

Every expected value is either a number the chapter states (checked within its rounding),
a closed form written out here, or an independent reference (the virtual cluster, a small
event simulation in numpy); none is a literal copied from the module under test.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from commbook import physics
from commbook.book.ch1 import parallelism_figures as s1
from commbook.book.ch1.boxes import BOX_LINKS
from commbook.collectives import all_reduce, t_formula
from commbook.comm_sim import VirtualCluster
from commbook.hardware import H100, IB_NDR_CHAPTER, NVLINK4_CHAPTER
from commbook.topology import Switch, TwoLevel
from commbook.units import GB, fmt_bytes, fmt_rate, fmt_time

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["en", "zh"])
def lang(request):
    if request.param == "zh":
        request.getfixturevalue("cjk_font")
    return request.param


# ----------------------------------------------------------------------------- Definition 1.1
def test_definition_1_1_payload_exact_and_approximation(page_glue):
    """Definition 1.1's cell: 70B parameters in BF16 on 1,000 GPUs at 50 GB/s (no α)."""
    g, P, N, beta = page_glue, 70e9, 1000, 50 * GB    # the box's inputs
    M = P * 2                                          # BF16
    assert BOX_LINKS["def1.1"].beta == beta and BOX_LINKS["def1.1"].alpha == 0
    assert (g["d11_params"], g["d11_bpv"], g["d11_gpus"], g["d11_intro_gpus"]) == ("70B", "2", "1,000", "10,000")
    assert g["d11_m_bytes"] == fmt_bytes(M) == "140 GB" and g["d11_beta_Bps"] == fmt_rate(beta)
    # the box's "2 × 140/50 ≈ 5.6 s" and the ring's exact bandwidth term, closed form written out
    exact = 2 * (N - 1) / N * M / beta
    assert g["d11_approx_s"] == fmt_time(2 * M / beta) == "5.6 s"
    assert g["d11_exact_s"] == fmt_time(exact) == "5.594 s"
    assert g["d11_gap_frac"] == f"{100 * (1 - exact / (2 * M / beta)):.1f}%" == "0.1%"     # read by the notes
    # per-worker ring traffic vs one parameter server receiving from everyone
    assert g["d11_worker_bytes"] == fmt_bytes(2 * (N - 1) / N * M, digits=4)
    assert g["d11_server_bytes"] == fmt_bytes(N * M)
    assert float(g["d11_server_ratio"]) == pytest.approx(N * M / (2 * (N - 1) / N * M), rel=2e-3)
    assert g["d11_rounds"] == f"{2 * (N - 1):,}"


def test_definition_1_1_on_the_virtual_cluster(page_glue):
    """1,000 GPUs on a switch with the box's link: the simulator's ring gives the exact term."""
    run = all_reduce(VirtualCluster(Switch(1000, BOX_LINKS["def1.1"])), nbytes=140 * GB, algorithm="ring")
    assert f"{run.rounds:,}" == page_glue["d11_rounds"]
    assert fmt_time(run.time) == page_glue["d11_exact_s"]


def test_definition_1_1_quiz_ten_times_the_gpus(page_glue):
    """The quiz: 10,000 GPUs; the bandwidth term barely moves, 2(N−1) rounds of α = 2 µs grow."""
    g, N, M, beta = page_glue, 10_000, 140 * GB, 50 * GB
    assert (g["q11_big"], g["q11_rounds"]) == ("10,000", f"{2 * (N - 1):,}")
    assert float(g["q11_factor"]) == pytest.approx(2 * (N - 1) / N, abs=5e-5)
    assert g["q11_exact_s"] == fmt_time(2 * (N - 1) / N * M / beta, 5)
    assert g["q11_exact_small_s"] == fmt_time(2 * 999 / 1000 * M / beta, 5)
    assert g["q11_alpha_s"] == fmt_time(IB_NDR_CHAPTER.alpha) == "2 µs"
    assert g["q11_lat_s"] == fmt_time(2 * (N - 1) * IB_NDR_CHAPTER.alpha)


# ----------------------------------------------------------------------------- Napkin math 1.1
def test_napkin_math_1_1(page_glue):
    """Napkin Math 1.1's cell: 140 GB on 64 GPUs over IB NDR, α = 1.5 µs, β = 50 GB/s."""
    g, N, alpha, beta, M = page_glue, 64, 1.5e-6, 50 * GB, 140 * GB      # the box's inputs
    link = BOX_LINKS["nm1.1"]
    assert (link.alpha, link.beta) == (alpha, beta)
    assert (g["nm_gpus"], g["nm_alpha_s"], g["nm_beta_Bps"], g["nm_m_bytes"]) == ("64", "1.5 µs", "50 GB/s", "140 GB")
    assert g["nm_params_sci"] == "7 × 10¹⁰" and g["nm_bpv"] == "2"
    assert float(g["nm_factor"]) == 2 * (N - 1) / N == 1.96875
    assert g["nm_tbw_s"] == "5,512.5 ms" and 1.96875 * M / beta == pytest.approx(5.5125, rel=1e-12)
    assert g["nm_steps"] == g["nm_rounds"] == "126"
    assert g["nm_tlat_s"] == fmt_time(126 * alpha) == "189 µs" and g["nm_tlat_ms_s"] == "0.2 ms"
    closed = 2 * (N - 1) / N * M / beta + 2 * (N - 1) * alpha
    assert closed * 1e3 == pytest.approx(5512.689, rel=1e-9)
    assert g["nm_total_s"] == "5,512.689 ms"                          # "≈ 5,512.7 ms"
    sim = all_reduce(VirtualCluster(Switch(N, link)), nbytes=M, algorithm="ring")
    assert sim.time == pytest.approx(closed, rel=1e-9) and sim.rounds == 2 * (N - 1)
    assert g["nm_sim_s"] == g["nm_total_s"]


def test_napkin_math_1_1_quiz_latency_share(page_glue):
    """The quiz: N·α·β/M reaches 1 % at N = 0.01·M/(α·β) GPUs."""
    assert page_glue["nm_run_share_frac"] == "1%"
    assert page_glue["nm_run_n"] == f"{round(0.01 * 140 * GB / (1.5e-6 * 50 * GB)):,}"


def test_napkin_math_1_1_note_alpha_of_the_table(page_glue):
    """The note: §1.2's table gives the same link α = 2 µs; the total barely moves."""
    M = 140 * GB
    box = t_formula("ring", 64, M, BOX_LINKS["nm1.1"].alpha, 50 * GB)
    other = t_formula("ring", 64, M, IB_NDR_CHAPTER.alpha, IB_NDR_CHAPTER.beta)
    assert IB_NDR_CHAPTER.alpha == 2e-6 and BOX_LINKS["nm1.1"].alpha == 1.5e-6
    assert other - box == pytest.approx(126 * 0.5e-6, rel=1e-9)
    assert (other - box) / box < 1e-4
    assert page_glue["nm_total_s"] == f"{box * 1e3:,.3f} ms"
    assert page_glue["nm_table_alpha_s"] == "2 µs" and page_glue["nm_total_table_s"] == f"{other * 1e3:,.3f} ms"


def test_sixty_percent_efficiency_and_zero_copy(page_glue):
    """The cost of synchronization on Napkin Math 1.1's all-reduce: 60 % efficiency, zero copy,
    and the GPU-hours a halved all-reduce saves over 100,000 steps on 64 GPUs."""
    g, total = page_glue, 2 * 63 / 64 * 140 * GB / (50 * GB) + 126 * 1.5e-6
    slow = total / 0.6
    assert slow > 9 and g["sync_eff_t_s"] == fmt_time(slow, 3) == "9.19 s"   # "over nine seconds"
    assert g["sync_eff_frac"] == "60%" and (g["sync_lo_frac"], g["sync_hi_frac"]) == ("30%", "70%")
    assert g["sync_zc_bytes"] == fmt_bytes(2 * 140 * GB) == "280 GB"           # one copy out, one in
    assert g["sync_half_saved_s"] == fmt_time(total / 2, 3) and g["sync_half_steps"] == "100,000"
    assert g["sync_half_gpuh"] == f"{round(64 * total / 2 * 100_000 / 3600):,}"


# ----------------------------------------------------------------------------- physics
def test_speed_of_light_numbers():
    assert physics.propagation_delay(1000) == pytest.approx(5e-6, rel=1e-12)     # 5 µs per km
    assert physics.propagation_delay(100) == pytest.approx(500e-9, rel=1e-12)    # 500 ns per 100 m
    assert physics.FIBER_SPEED_CHAPTER * 1e-6 == pytest.approx(200)              # 200 m per µs


def test_light_and_energy_numbers_the_pages_glue(page_glue):
    """Light at 200,000 km/s: 5 µs per km, 500 ns per 100 m; in SMF-28 (group index 1.4682) 4.9 µs
    per km; 50 GB/s × those delays in flight.  Figure 1's tiers and their ratios to SRAM."""
    g, c = page_glue, 299_792_458.0
    assert (g["ph_speed"], g["ph_km_s"], g["ph_rack_m"], g["ph_rack_s"]) == ("200,000 km/s", "5 µs", "100 m", "500 ns")
    assert g["ph_smf_index"] == "1.4682" and g["ph_smf_km_s"] == fmt_time(1000 * 1.4682 / c, 3)
    assert (g["ph_bdp_beta_Bps"], g["ph_bdp_rack_bytes"], g["ph_bdp_km_bytes"]) == \
        ("50 GB/s", fmt_bytes(50 * GB * 500e-9), fmt_bytes(50 * GB * 5e-6))
    E = physics.ENERGY
    for k in ("SRAM", "HBM", "NVLink", "IB"):
        assert g[f"e_{k}"] == f"{E[k].figure_pj:,g}"
    for k in ("HBM", "NVLink", "IB"):
        assert g[f"e_{k}_x"] == f"{E[k].figure_pj / E['SRAM'].figure_pj:,g}"
    assert (g["e_fabric"], g["e_ndr"], g["e_optic_w"]) == ("50 m", "400 Gb/s", "8–9 W")
    assert (g["e_nvl_nvidia"], g["e_nvl_pcie"]) == ("1.3", "5")


def test_energy_estimate_4_8_kJ_and_160_kJ(page_glue):
    """10,000 GPUs all-reduce 1 GB each, 2 × 8 Gb per GPU: 4.8 kJ at 30 pJ/bit, 160 kJ at Figure 1's
    1,000 pJ/bit; the exact ring factor 2(N−1)/N; the notes' share of one second of 700 W GPUs."""
    g, bits, n = page_glue, 1e9 * 8, 10_000
    joules = 2 * bits * 30e-12 * n
    assert joules == pytest.approx(4.8e3, rel=1e-12) and g["est_j"] == "4.8 kJ"              # "≈ 4.8 kJ"
    assert g["est_fig_ib"] == f"{joules * 1000 / 30 / 1e3:.0f} kJ" == "160 kJ"
    # the 30 pJ/bit of the estimate lies in the published optical range, the figure's 1,000 does not
    ib = physics.ENERGY["IB"]
    assert ib.low_pj <= 30 <= ib.high_pj and not ib.figure_in_range
    assert g["est_ib_range"] == f"{2 * bits * ib.low_pj * 1e-12 * n / 1e3:g} kJ – {2 * bits * ib.high_pj * 1e-12 * n / 1e3:g} kJ"
    assert g["est_ring"] == f"{joules * (n - 1) / n / 1e3:.5g} kJ"
    assert (g["est_gpus"], g["est_n_bytes"], g["est_pj"], g["est_factor"]) == ("10,000", "1 GB", "30", "2")
    # the note: link energy against one second of the GPUs' power
    assert (g["est_tdp"], g["est_gpu_mj"]) == ("700 W", "7 MJ")
    assert g["est_share_frac"] == f"{100 * joules / (n * 700):.2f}%" and joules / (n * 700) < 1e-3
    assert g["est_share_ib_frac"] == f"{100 * joules * 1000 / 30 / (n * 700):.2g}%"


# ----------------------------------------------------------------------------- Figure 1
def _lines_by_gid(fig, prefix):
    out = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            gid = line.get_gid() or ""
            if gid.startswith(prefix):
                out[gid[len(prefix):]] = line
    return out


def test_figure_1_true_log_axis_with_physics_values(lang):
    fig = s1.fig_energy(lang=lang)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    values, ranges = _lines_by_gid(fig, "value:"), _lines_by_gid(fig, "range:")
    assert set(values) == set(ranges) == set(s1.ENERGY_ORDER) == set(physics.ENERGY)
    for k, tier in physics.ENERGY.items():
        assert list(values[k].get_xdata()) == [tier.figure_pj]
        assert list(ranges[k].get_xdata()) == [tier.low_pj, tier.high_pj]
    # the chapter's values: 0.5, 20, 100, 1,000 pJ/bit, ratios 40×, 200×, 2,000×
    drawn = [values[k].get_xdata()[0] for k in s1.ENERGY_ORDER]
    assert drawn == [0.5, 20, 100, 1000]
    assert [d / drawn[0] for d in drawn[1:]] == [40, 200, 2000]
    # nearest tier on top: y decreases along the order
    ys = [values[k].get_ydata()[0] for k in s1.ENERGY_ORDER]
    assert ys == sorted(ys, reverse=True)
    # on a log axis equal ratios are equal distances: check with display coordinates
    x = [ax.transData.transform((v, 0))[0] for v in (0.5, 5, 50)]
    assert x[1] - x[0] == pytest.approx(x[2] - x[1], rel=1e-9)
    # the annotations carry the computed ratios and say which values lie outside the range
    notes = {t.get_gid(): t.get_text() for t in ax.texts}
    assert "2,000" in notes["note:IB"] and "40" in notes["note:HBM"]
    for k in ("NVLink", "IB"):
        tier = physics.ENERGY[k]
        assert f"{tier.figure_pj / tier.high_pj:.0f}" in notes[f"note:{k}"]
    assert "note:SRAM" not in notes
    est = [l for l in ax.get_lines() if l.get_gid() == "estimate"]
    assert est and list(est[0].get_xdata()) == [30, 30]


def test_figure_1_note_nvlink_and_ib_far_above_the_sources():
    for k in ("NVLink", "IB"):
        tier = physics.ENERGY[k]
        assert not tier.figure_in_range and tier.figure_pj / tier.high_pj > 10
    for k in ("SRAM", "HBM"):
        assert physics.ENERGY[k].figure_in_range


# ----------------------------------------------------------------------------- Figure 2
def _event_exposed(t_backward, t_layer, layers):
    """Independent reference: layer l's gradient is ready at l·T_bwd/L; all-reduces run
    one after another; return the time the last one ends after backward ends."""
    ready = np.arange(1, layers + 1) * t_backward / layers
    end = 0.0
    for r in ready:
        end = max(end, r) + t_layer
    return end - t_backward


def _nccl_ring(p, n, nv=NVLINK4_CHAPTER, ib=IB_NDR_CHAPTER, G=8):
    """NCCL's ring on nodes of G GPUs with one NIC each, one channel per NIC and PXN, written
    out: 2(p-1) rounds; in each a GPU's NVLink port carries G chunks of n/(Gp) (G-1 hops in
    the node, one relayed to the channel's NIC), each NIC one chunk, and the round waits
    for its node-crossing message (α of InfiniBand)."""
    nvl = n / (p * nv.beta)
    return 2 * (p - 1) * max(nv.alpha + nvl, ib.alpha + max(nvl, n / (G * p * ib.beta)))


@pytest.mark.parametrize("gpus", [8, 64, 520, 1024, 4096])
@pytest.mark.parametrize("weak", [False, True])
@pytest.mark.parametrize("single", [False, True])
def test_step_model_against_an_event_simulation(gpus, weak, single):
    model = s1.FIG2_MODEL.single_ring() if single else s1.FIG2_MODEL
    model = model.weak(1024) if weak else model
    b = s1.step_breakdown(gpus, model)
    tokens = 1024 if weak else model.global_tokens / gpus
    t_c = 6 * 70e9 * tokens / (H100.bf16_flops * 0.40)
    assert b.compute_s == pytest.approx(t_c, rel=1e-12)
    assert b.backward_s == pytest.approx(2 / 3 * t_c, rel=1e-12)
    link = NVLINK4_CHAPTER if gpus <= 8 else IB_NDR_CHAPTER
    layer = 140 * GB / 80
    if single or gpus <= 8:             # one ring: the node's whole chunk n/p through one link
        assert b.layer_s == pytest.approx(2 * (gpus - 1) * (link.alpha + layer / (gpus * link.beta)), rel=1e-12)
    else:
        assert b.layer_s == pytest.approx(_nccl_ring(gpus, layer), rel=1e-12)
    exposed = _event_exposed(b.backward_s, b.layer_s, 80)
    assert b.comm_s + b.stall_s == pytest.approx(exposed, rel=1e-9)
    assert b.step_s == pytest.approx(b.compute_s + exposed, rel=1e-9)
    assert sum(b.shares.values()) == pytest.approx(1.0, rel=1e-12)


def test_flat_ring_across_nodes_is_gated_by_infiniband():
    """The model prices a multi-node ring with InfiniBand's α and β, NCCL's ring with a
    chunk of n/(8p) per NIC: the virtual cluster's two-level topology agrees."""
    layer = 140 * GB / 80
    run = all_reduce(VirtualCluster(TwoLevel(2, 8, NVLINK4_CHAPTER, IB_NDR_CHAPTER)), nbytes=layer,
                     algorithm="ring", channels=1)
    assert run.time == pytest.approx(s1.step_breakdown(16, s1.FIG2_MODEL.single_ring()).layer_s, rel=1e-9)
    for nodes in (2, 8):
        run = all_reduce(VirtualCluster(TwoLevel(nodes, 8, NVLINK4_CHAPTER, IB_NDR_CHAPTER, pxn=True)), nbytes=layer)
        assert run.time == pytest.approx(s1.step_breakdown(8 * nodes).layer_s, rel=1e-9)
        assert run.time == pytest.approx(_nccl_ring(8 * nodes, layer), rel=1e-9)
    run = all_reduce(VirtualCluster(TwoLevel(2, 8, NVLINK4_CHAPTER, IB_NDR_CHAPTER)), nbytes=layer,
                     algorithm="hierarchical")
    assert run.time == pytest.approx(s1.step_breakdown(16, s1.FIG2_MODEL.hierarchical()).layer_s, rel=1e-9)


def test_first_exposed_is_where_allreduce_outgrows_backward():
    n = s1.first_exposed()
    assert n % 8 == 0
    b, prev = s1.step_breakdown(n), s1.step_breakdown(n - 8)
    assert b.allreduce_s > b.backward_s and prev.allreduce_s <= prev.backward_s
    assert s1.first_exposed(s1.FIG2_MODEL.hierarchical()) > n
    single = s1.first_exposed(s1.FIG2_MODEL.single_ring())
    assert single < n
    for m, model in ((n, s1.FIG2_MODEL), (single, s1.FIG2_MODEL.single_ring())):
        # independent: backward 2/3 · 6·70e9·(4M/m)/(0.4·peak) against 80 written-out rings
        t_bwd = 2 / 3 * 6 * 70e9 * (1024 * 4096 / m) / (H100.bf16_flops * 0.40)
        t_bwd_prev = 2 / 3 * 6 * 70e9 * (1024 * 4096 / (m - 8)) / (H100.bf16_flops * 0.40)
        ring = (lambda q: 80 * 2 * (q - 1) * (IB_NDR_CHAPTER.alpha + 140 * GB / 80 / (q * IB_NDR_CHAPTER.beta))) \
            if model.algorithm == "flat" else (lambda q: 80 * _nccl_ring(q, 140 * GB / 80))
        assert ring(m) > t_bwd and ring(m - 8) <= t_bwd_prev


def _bars(fig):
    out = {}
    for ax in fig.axes:
        for patch in ax.patches:
            gid = patch.get_gid() or ""
            if gid.startswith(("model:", "illustrative:")):
                kind, n, part = gid.split(":")
                out.setdefault((kind, int(n)), {})[part] = patch.get_height()
    return out


def test_figure_2_bars_sum_to_100_and_equal_the_model(lang):
    fig = s1.fig_step_shares(lang=lang)
    bars = _bars(fig)
    for n in s1.FIG2_SIZES:
        model = bars[("model", n)]
        assert sum(model.values()) == pytest.approx(100.0, rel=1e-9)
        shares = s1.step_breakdown(n).shares
        for part, h in model.items():
            assert h == pytest.approx(100 * shares[part], rel=1e-12)
    ill_sizes = [n for (kind, n) in bars if kind == "illustrative"]
    assert sorted(ill_sizes) == sorted(s1.ILLUSTRATIVE_SHARES)
    for n in ill_sizes:
        assert sum(bars[("illustrative", n)].values()) == pytest.approx(100.0, rel=1e-9)


def test_figure_2_illustrative_shares_are_the_chapters_and_the_note():
    ill = s1.ILLUSTRATIVE_SHARES
    assert ill[8]["comm"] == 0.25                                    # "约 25%"
    assert (ill[64]["comm"], ill[64]["stall"]) == (0.50, 0.05)       # "约 50%", "另有 5%"
    assert ill[4096]["comm"] >= 0.65                                  # caption "超过 65%"
    # text: communication + stall = 80 %, compute 20 %: both hold only with a 15 % stall
    assert ill[4096]["comm"] + ill[4096]["stall"] == pytest.approx(s1.ILLUSTRATIVE_TEXT_COMM_PLUS_STALL)
    assert ill[4096]["compute"] == pytest.approx(1 - s1.ILLUSTRATIVE_TEXT_COMM_PLUS_STALL)
    # NVLink "900 GB/s" is both directions: 18× IB instead of the one-way 9×
    assert s1.ILLUSTRATIVE_NVLINK_BIDIR == 2 * NVLINK4_CHAPTER.beta
    assert s1.ILLUSTRATIVE_NVLINK_BIDIR / IB_NDR_CHAPTER.beta == 18
    assert NVLINK4_CHAPTER.beta / IB_NDR_CHAPTER.beta == 9


def test_figure_2_model_story():
    """Shares grow with the cluster under a fixed global batch; flat under a fixed per-GPU batch."""
    comm = [s1.step_breakdown(n).shares["comm"] for n in s1.FIG2_SIZES]
    assert comm == sorted(comm) and comm[0] == 0 and comm[-1] > 0.5
    # NCCL's ring under a fixed per-GPU batch: hidden on 64 GPUs, exposed on 4,096 by its start-ups
    weak = s1.FIG2_MODEL.weak(1024)
    w = [s1.step_breakdown(n, weak).shares["comm"] for n in (64, 4096)]
    assert w[0] == 0 and w[1] > 0.5
    assert 80 * 2 * 4095 * IB_NDR_CHAPTER.alpha > 0.5 * s1.step_breakdown(4096).allreduce_s
    # the single ring of the note: exposed from one node on under the fixed per-GPU batch
    ws = [s1.step_breakdown(n, s1.FIG2_MODEL.single_ring().weak(1024)).shares["comm"] for n in (64, 4096)]
    assert ws[0] > 0.5 and abs(ws[1] - ws[0]) < 0.1
    hier = s1.step_breakdown(4096, s1.FIG2_MODEL.hierarchical())
    assert hier.shares["comm"] < s1.step_breakdown(4096).shares["comm"]
    single = s1.step_breakdown(4096, s1.FIG2_MODEL.single_ring())
    assert single.shares["comm"] > s1.step_breakdown(4096).shares["comm"]
    layer, t_c = 140 * GB / 80, 6 * 70e9 * 1024 / (H100.bf16_flops * 0.40)    # 4M tokens / 4,096 GPUs

    def share(t_layer):                 # exposed (T_ar - T_bwd)(L-1)/L over compute + that + stall
        exposed = max(0.0, 80 * t_layer - 2 / 3 * t_c) * 79 / 80
        return exposed / (t_c + exposed + t_layer)
    flat = 2 * 4095 * (IB_NDR_CHAPTER.alpha + layer / (4096 * IB_NDR_CHAPTER.beta))
    assert single.shares["comm"] == pytest.approx(share(flat), rel=1e-12)        # the note's 83.9 %
    assert s1.step_breakdown(4096).shares["comm"] == pytest.approx(share(_nccl_ring(4096, layer)), rel=1e-12)


def test_step_model_rejects_bad_input():
    with pytest.raises(ValueError):
        s1.step_breakdown(12)               # not a whole number of 8-GPU nodes
    with pytest.raises(ValueError):
        s1.StepModel(mfu=0)
    with pytest.raises(ValueError):
        s1.StepModel(algorithm="tree")


# ----------------------------------------------------------------------------- tables
def test_transport_manifest():
    t = s1.transport_manifest()
    prim = dict(zip(t.column("strategy"), t.column("primitive")))
    assert prim["Data parallel"] == "all-reduce" and prim["Tensor parallel"] == "all-reduce"
    assert prim["Expert parallel (MoE)"] == "all-to-all"
    assert prim["FSDP / ZeRO"] == "all-gather + reduce-scatter"
    assert t.meta["point_to_point"] == ["Pipeline parallel"]
    zh = t.to_text("zh")
    # every English cell has its Chinese rendering (primitive names are the book's terms)
    for row in t.rows:
        for col in t.columns:
            assert row[col] in t.labels["zh"], row[col]
    assert "数据并行" in zh and "流水线并行" in zh and str(len(t)) in zh


@pytest.fixture(scope="module")
def page00():
    """The purpose page (English) as the book runs it: its glued texts."""
    from conftest import executed_glue
    return executed_glue(ROOT / "chapters/en/ch1/00-purpose.md")


def test_connections_table(page00):
    """The purpose page's pairs N(N−1) and ring factors 2(N−1)/N from 8 to 10,000 workers, and
    the table of its rows."""
    g = page00
    assert (g["pu_small"], g["pu_small_pairs"], g["pu_large"], g["pu_large_pairs"]) == ("8", "56", "10,000", "99,990,000")
    assert (g["pu_grow_n"], g["pu_grow_pairs"]) == ("1,250", f"{round(10_000 * 9_999 / 56):,}")
    assert float(g["pu_ring_small"]) == pytest.approx(2 * 7 / 8, abs=5e-3)
    assert float(g["pu_ring_large"]) == pytest.approx(2 * 9_999 / 10_000, abs=5e-6)
    rows = [dict(n=n, pairs=n * (n - 1), ring_links=n, ring_factor=2 * (n - 1) / n) for n in (8, 10_000)]
    t = s1.connections_table(rows)
    assert t.column("pairs") == [56, 99_990_000]
    assert f"{round(10_000 * 9_999 / 56):,}" in t.to_text("en") and "1,250" in t.to_text("en")
    with pytest.raises(ValueError):
        s1.logical_connections(0)


def test_purpose_quiz_64_gpus(page00):
    """The quiz: 64 GPUs have 64·63 ordered pairs; a ring sends 2·63/64 of the buffer in 2·63 rounds."""
    assert (page00["pu_q_n"], page00["pu_q_pairs"], page00["pu_q_ring_msgs"]) == ("64", f"{64 * 63:,}", "126")
    assert float(page00["pu_q_ring"]) == pytest.approx(2 * 63 / 64, abs=5e-6)


# ----------------------------------------------------------------------------- pages
PAGES = ["00-purpose.md", "01-parallelism.md"]


@pytest.mark.parametrize("page", PAGES)
def test_pages_have_matching_notes_and_no_internal_ids(page):
    en = (ROOT / "chapters" / "en" / "ch1" / page).read_text(encoding="utf-8")
    zh = (ROOT / "chapters" / "zh" / "ch1" / page).read_text(encoding="utf-8")
    # the notes on the original sit in chapters/*/notes/ch1-sources.md, one marker each here
    assert en.count("{ref}`note ") == zh.count("{ref}`注 ")
    assert en.count("{admonition} Check yourself") == zh.count("{admonition} 自测") >= 1
    for text in (en, zh):
        prose = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
        assert not re.search(r"\bF\.?\d+\b|\bT-[a-n]\b|inventory|本章原文|the chapter says", prose)
    # exactly one visible code cell (the copyable commbook cell)
    visible = [c for c in re.findall(r"```\{code-cell\} python\n(.*?)```", en, flags=re.S)
               if ":tags:" not in c.splitlines()[0]]
    assert len(visible) == 1 and "commbook" in visible[0]


@pytest.fixture(scope="module", params=["en", "zh"])
def page_glue(request):
    from conftest import executed_glue
    return executed_glue(Path(__file__).resolve().parents[1] / "chapters" / request.param / "ch1" / "01-parallelism.md")


def test_page_glues_figure_2_with_the_ring_nccl_runs(page_glue):
    """Both pages, executed: the Figure 2 numbers recomputed from the written-out rings."""
    g, layer, ib = page_glue, 140 * GB / 80, IB_NDR_CHAPTER

    def share(gpus, t_layer):
        t_c = 6 * 70e9 * (1024 * 4096 / gpus) / (H100.bf16_flops * 0.40)
        exposed = max(0.0, 80 * t_layer - 2 / 3 * t_c) * 79 / 80
        return exposed / (t_c + exposed + t_layer)
    single = lambda q: 2 * (q - 1) * (ib.alpha + layer / (q * ib.beta))
    for key, gpus, ring in (("f2_comm4096_frac", 4096, _nccl_ring), ("f2_comm8192_frac", 8192, _nccl_ring),
                            ("f2_single_comm4096_frac", 4096, lambda q, n: single(q))):
        assert g[key] == f"{100 * share(gpus, ring(gpus, layer)):.1f}%"
    assert g["f2_single_comm4096_frac"] == "83.9%"
    assert g["f2_alpha4096_s"] == "1.31 s" and round(80 * 2 * 4095 * ib.alpha, 2) == 1.31


def test_energy_ranges_compare_like_with_like():
    """Figure 1's NVLink range is NVLink-C2C die to die and its InfiniBand range the optics
    alone, while the figure's values include NIC, SerDes and switch: the pages say so and no
    longer call the two values too high (no 'times the top of those ranges' verdict).  The
    reconciliation is a note on the sources (chapters/{lang}/notes/ch1-sources.md)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    for lang, verdict, c2c in (("en", "far above those ranges", "NVLink-C2C"), ("zh", "远高于这些范围", "NVLink-C2C")):
        text = (root / f"chapters/{lang}/ch1/01-parallelism.md").read_text() + \
            (root / f"chapters/{lang}/notes/ch1-sources.md").read_text()
        assert verdict not in text and "e_NVLink_over" not in text and "e_IB_over" not in text
        assert text.count(c2c) >= 2 and "SerDes" in text


def test_figure_2_mfu_is_inside_the_cited_range():
    """40 % MFU lies inside the 38-43 % BF16 MFU of Llama 3 (Dubey et al. 2024, Table 4),
    which both pages cite beside it."""
    from pathlib import Path
    lo, hi = s1.LLAMA3_MFU["range"]
    assert lo <= s1.StepModel().mfu <= hi
    root = Path(__file__).resolve().parents[1]
    for lang in ("en", "zh"):
        text = (root / f"chapters/{lang}/ch1/01-parallelism.md").read_text()
        assert "f2_mfu_lo" in text and ("Table 4" in text or "表 4" in text)


def test_energy_table_is_physics_energy():
    """The note's table of Figure 1's ranges reads commbook.physics.ENERGY and says what each
    range counts."""
    from commbook.book.ch1 import parallelism_tables as s1t
    t = s1t.energy_table()
    assert [(r["figure"], r["low"], r["high"]) for r in t.rows] == [
        (physics.ENERGY[k].figure_pj, physics.ENERGY[k].low_pj, physics.ENERGY[k].high_pj) for k in s1.ENERGY_ORDER]
    assert "NVLink-C2C" in t.to_html("en") and "NVLink-C2C" in t.to_html("zh")


def test_fig2_facts_the_page_glues():
    """The α every layer's ring pays at 4,096 GPUs (80 layers × 2·4095 steps × α_IB) is part of,
    and less than, the all-reduce time of the step."""
    f = s1.fig2_facts()
    assert f.alpha4096_s == pytest.approx(80 * 2 * 4095 * IB_NDR_CHAPTER.alpha) and f.alpha4096_s < f.tar4096_s
    assert (f.n8, f.n4096, f.layers, f.bwd) == (8, 4096, 80, "2/3")
    assert f.ill_ratio_one == pytest.approx(450 / 50) and f.ill_ratio_bidir == pytest.approx(900 / 50)

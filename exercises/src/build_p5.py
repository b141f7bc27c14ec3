"""Generate (and execute) exercises/zh/p5.ipynb and exercises/en/p5.ipynb.

The two notebooks share every code cell (only the ``LANG = ...`` line differs) and
carry their own markdown.  Run from the repository root:

    .venv/bin/python exercises/src/build_p5.py            # write and execute both
    .venv/bin/python exercises/src/build_p5.py --no-exec  # write only

Outputs are committed, so that ``pytest --nbval exercises/`` can compare them; they are
deterministic (printed, formatted numbers only).  Cell ids are fixed so that
regenerating gives no spurious diff.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
SOLUTION_TAGS = ["hide-input", "hide-output"]

# ----------------------------------------------------------------------------- cells
# Each item: ("md", {"zh": ..., "en": ...}) or ("code", source, tags).
# A code source may contain the placeholder {LANG}; nothing else differs per language.

CELLS: list[tuple] = []


def md(zh: str, en: str) -> None:
    CELLS.append(("md", {"zh": zh.strip("\n"), "en": en.strip("\n")}))


def code(source: str, tags: list[str] | None = None) -> None:
    CELLS.append(("code", source.strip("\n"), list(SOLUTION_TAGS if tags is None else tags)))


def solution(zh: str, en: str) -> None:
    """The written solution, folded into a dropdown until the reader opens it."""
    md(f"::::{{dropdown}} 参考解答\n{zh.strip()}\n::::",
       f"::::{{dropdown}} Solution\n{en.strip()}\n::::")


# ----------------------------------------------------------------------------- page top
md(r"""
(zh-p5-exercises)=
# P5 练习

[English version](../en/p5.ipynb)

这一页收录第 P5 讲的 10 道练习。每道题先给题目，再给参考解答：文字推导收在"参考解答"下拉框里，
计算用的代码和输出默认也是折叠的，先自己算一遍再打开。标 💻 的题可以直接用 `commbook` 的模拟器验证。

页面上的每个数字都是构建时由 `commbook` 现算的。每个代码单元末尾的 `assert` 把算出的数与讲义给出的答案对照，
容差就是讲义答案本身的舍入精度（讲义写 11.0 MB，就要求结果四舍五入到 0.1 MB 后等于 11.0）。
如果 `commbook` 里的某个硬件常数被改动，这些断言就会失败。

单位：KB、MB、GB 是十进制（1 MB = 10⁶ 字节），带宽是单向的 GB/s。
""", r"""
(en-p5-exercises)=
# P5 Exercises

[中文版 / Chinese version](../zh/p5.ipynb)

This page collects the 10 exercises of lecture P5. Each one states the problem and then
gives a worked solution: the reasoning sits in a collapsed "Solution" box, and the code
that computes the numbers, with its output, is collapsed as well. Try each problem before
you open them. Exercises marked 💻 can be checked directly with the `commbook` simulator.

Every number on this page is computed by `commbook` when the book is built. The `assert`
at the end of each code cell compares the computed value with the answer the lecture
states, to the precision the lecture states it (an answer written as 11.0 MB must round
to 11.0 at 0.1 MB). If a hardware constant in `commbook` changes, these asserts fail.

Units: KB, MB and GB are decimal (1 MB = 10⁶ bytes); bandwidths are GB/s in one direction.
""")

code(r'''
LANG = "{LANG}"

import math
from dataclasses import replace

from commbook.collectives import all_gather, all_reduce, broadcast
from commbook.comm_sim import VirtualCluster
from commbook.cost import (all_to_all_bounds, chain_broadcast_optimum, crossover_rd_ring,
                           effective_bandwidth, half_bandwidth_point, p2p_time, t_all_gather,
                           t_allreduce_hierarchical, t_broadcast, t_formula, t_reduce_scatter)
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from commbook.llm import (DEEPSEEK_V3, LLAMA31_70B, LLAMA31_70B_MHA, LLAMA31_8B, kv_bytes,
                          kv_transfer_time, moe_cross_node_bytes, tp_allreduces_per_step,
                          tp_comm_time, tp_message_bytes)
from commbook.topology import Switch, TwoLevel
from commbook.units import GB, KB, MB, fmt_bytes, ms, us


def rounds_to(value, stated, step):
    """True when `value`, rounded to the nearest `step`, gives the lecture's `stated` answer."""
    return abs(value - stated) <= step / 2 * (1 + 1e-9)


def same(x, y):
    """Two computations of the same time or size agree (up to floating-point rounding)."""
    return math.isclose(x, y, rel_tol=1e-12)


def tr(zh, en):
    """The label in the page's language (only printed labels differ between the two pages)."""
    return zh if LANG == "zh" else en


AGREES = tr("✓ 与讲义的答案一致", "✓ agrees with the lecture's answer")
''', tags=[])

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-p5-ex-1)=
## 练习 1 · 半带宽点

一条 InfiniBand NDR 链路，启动延迟 α = 5 µs，单向带宽 β = 50 GB/s。它的半带宽点 $n_{1/2}$ 是多大？
分别发一条 25 KB 和一条 2.5 MB 的消息，各用多长时间，实际拿到多少带宽（占 β 的百分之几）？
""", r"""
(en-p5-ex-1)=
## Exercise 1 · Half-bandwidth point

An InfiniBand NDR link has a start-up latency α = 5 µs and a one-way bandwidth
β = 50 GB/s. What is its half-bandwidth point $n_{1/2}$? For one 25 KB message and one
2.5 MB message, how long does the transfer take, and what bandwidth does it actually
achieve, as a share of β?
""")
solution(r"""
半带宽点就是 α 与 β 的乘积：$n_{1/2} = \alpha\beta = 5\times10^{-6}\ \text{s} \times 50\times10^{9}\ \text{B/s} = 250$ KB。

- 25 KB：$T = 5 + 25\,\text{KB}/(50\,\text{GB/s}) = 5 + 0.5 = 5.5$ µs，实得 $25\,\text{KB}/5.5\,\mu\text{s} \approx 4.5$ GB/s，只有 β 的约 9%。
- 2.5 MB：$T = 5 + 50 = 55$ µs，实得约 45.5 GB/s，是 β 的约 91%。

一般地，实得带宽占 β 的比例是 $n/(n + n_{1/2})$：25 KB 是 $n_{1/2}$ 的十分之一，得 1/11；2.5 MB 是它的十倍，得 10/11。
""", r"""
The half-bandwidth point is the product of the two parameters:
$n_{1/2} = \alpha\beta = 5\times10^{-6}\ \text{s} \times 50\times10^{9}\ \text{B/s} = 250$ KB.

- 25 KB: $T = 5 + 25\,\text{KB}/(50\,\text{GB/s}) = 5 + 0.5 = 5.5$ µs, so the link delivers
  $25\,\text{KB}/5.5\,\mu\text{s} \approx 4.5$ GB/s, only about 9% of β.
- 2.5 MB: $T = 5 + 50 = 55$ µs, about 45.5 GB/s, roughly 91% of β.

In general the share of β a message obtains is $n/(n + n_{1/2})$: 25 KB is a tenth of
$n_{1/2}$ and gets 1/11, 2.5 MB is ten times $n_{1/2}$ and gets 10/11.
""")
code(r'''
a, b = IB_NDR.alpha, IB_NDR.beta
n_half = half_bandwidth_point(a, b)
print(f"n_1/2 = αβ = {n_half / KB:.1f} KB")
assert rounds_to(n_half / KB, 250, 1)

for n, t_stated, bw_stated, pct_stated in ((25 * KB, 5.5, 4.5, 9), (2.5 * MB, 55, 45.5, 91)):
    t, bw = p2p_time(n, a, b), effective_bandwidth(n, a, b)
    print(f"n = {fmt_bytes(n):>6s}:  T = {t / us:5.2f} µs,  n/T = {bw / GB:6.3f} GB/s = {bw / b:.1%} × β")
    assert rounds_to(t / us, t_stated, 0.1)
    assert rounds_to(bw / GB, bw_stated, 0.1)
    assert rounds_to(100 * bw / b, pct_stated, 1)
    assert same(bw / b, n / (n + n_half))
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-p5-ex-2)=
## 练习 2 · ring all-reduce 的时间公式

$p$ 个设备连成一个环做 all-reduce，每个设备有 $n$ 字节。推导它的时间公式，并解释为什么每一步每个设备只发 $n/p$ 字节。
""", r"""
(en-p5-ex-2)=
## Exercise 2 · The ring all-reduce formula

$p$ devices, each holding $n$ bytes, run an all-reduce around a ring. Derive the time
it takes, and explain why in every step each device sends only $n/p$ bytes.
""")
solution(r"""
把每个设备的缓冲区切成 $p$ 块，每块 $n/p$ 字节。

1. **reduce-scatter，$p-1$ 步。** 每一步，每个设备把手上的一块发给环上的下一个设备，对方把它加到自己的同号块上。
   某一块从一个设备出发，经过 $p-1$ 次转发、累加了其余所有设备的贡献；结束时每个设备恰好握有一块完整的和。
2. **all-gather，$p-1$ 步。** 完整的块再沿环转一圈，每步每个设备转发一块，$p-1$ 步后人人都有全部 $p$ 块。

每一步里所有设备同时发送，各用自己通往下一个设备的链路，每条链路只承载 $n/p$ 字节，所以一步的时间是 $\alpha + \frac{n}{p\beta}$。一共 $2(p-1)$ 步：

$$
T_\text{ring} = 2(p-1)\left(\alpha + \frac{n}{p\beta}\right) = 2(p-1)\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{\beta}.
$$

**为什么只发 $n/p$：** 每一块只需要绕环走一圈来累加、再走一圈来分发。把数据切成 $p$ 块后，$p$ 条链路在每一步都同时在搬不同的块，
没有一条链路空闲，也没有哪条链路要搬整个缓冲区。于是带宽项 $\frac{2(p-1)}{p}\cdot\frac{n}{\beta}$ 随 $p$ 增大只趋近 $2n/\beta$，
正好达到 all-reduce 每个设备至少要发送 $\frac{2(p-1)}{p}n$ 字节的下界；代价是 α 项随 $p$ 线性增长。

下面的代码在模拟器里跑 ring all-reduce（NVLink 4 交换机，α = 2 µs，β = 450 GB/s），检查总时间、步数、每步时间和每个设备发出的字节都与公式一致。
""", r"""
Cut each device's buffer into $p$ chunks of $n/p$ bytes.

1. **Reduce-scatter, $p-1$ steps.** In every step each device sends one chunk to its
   successor on the ring, which adds it to its own copy of that chunk. A chunk that
   starts at one device is forwarded $p-1$ times and picks up every other device's
   contribution on the way; at the end each device owns one fully reduced chunk.
2. **All-gather, $p-1$ steps.** The finished chunks travel around the ring once more,
   one chunk per device per step, until every device has all $p$ of them.

In every step all devices send at once, each over its own link to the next device, and
each link carries only $n/p$ bytes, so a step takes $\alpha + \frac{n}{p\beta}$. There
are $2(p-1)$ steps:

$$
T_\text{ring} = 2(p-1)\left(\alpha + \frac{n}{p\beta}\right) = 2(p-1)\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{\beta}.
$$

**Why only $n/p$:** every chunk has to go around the ring once to be summed and once to
be distributed. Cutting the data into $p$ chunks keeps all $p$ links busy with different
chunks in every step; no link sits idle and none has to carry the whole buffer. The
bandwidth term $\frac{2(p-1)}{p}\cdot\frac{n}{\beta}$ therefore only approaches
$2n/\beta$ as $p$ grows, which meets the lower bound of $\frac{2(p-1)}{p}n$ bytes that
each device must send in any all-reduce; the price is an α term that grows linearly in $p$.

The code below runs the ring all-reduce in the simulator (an NVLink 4 switch,
α = 2 µs, β = 450 GB/s) and checks that the total time, the number of steps, the time
of each step and the bytes each device sends all match the formula.
""")
code(r'''
for p in (2, 4, 8, 16):
    for n in (64 * KB, 4 * MB, 256 * MB):
        run = all_reduce(VirtualCluster(Switch(p, NVLINK4)), nbytes=n)
        formula = t_formula("ring", p, n, 2e-6, 450e9)
        assert same(run.time, formula)
        assert run.rounds == 2 * (p - 1)
        assert all(same(t, 2e-6 + n / (p * 450e9)) for t in run.round_times)
        assert all(same(s, 2 * (p - 1) / p * n) for s in run.bytes_sent)
    print(f"p = {p:2d}, n = 256 MB:  {tr('模拟器', 'simulator')} {run.time / us:8.2f} µs = "
          f"{tr('公式', 'formula')} {formula / us:8.2f} µs;  {run.rounds} {tr('步', 'steps')}, "
          f"{tr('每个设备发出', 'each device sends')} {run.bytes_sent[0] / MB:.0f} MB")
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-p5-ex-3)=
## 练习 3 · 递归倍增与 ring 的交叉点 💻

16 个设备通过 NVLink 相连（α = 2 µs，β = 450 GB/s）。消息多大时，递归倍增 all-reduce 与 ring all-reduce 用时相同？
$p = 8$ 时这个交叉点是 7.92 MB；$p = 16$ 时它变大了还是变小了？
""", r"""
(en-p5-ex-3)=
## Exercise 3 · Where recursive doubling and ring cross 💻

Sixteen devices are connected by NVLink (α = 2 µs, β = 450 GB/s). At what message size
do the recursive-doubling all-reduce and the ring all-reduce take the same time? For
$p = 8$ that size is 7.92 MB; is it larger or smaller for $p = 16$?
""")
solution(r"""
递归倍增走 $\log_2 p$ 步，每步交换整个缓冲区；ring 走 $2(p-1)$ 步，每步 $n/p$。$p = 16$ 时令两者相等：

$$
4\left(\alpha + \frac{n}{\beta}\right) = 30\,\alpha + 1.875\,\frac{n}{\beta}
\quad\Longrightarrow\quad 2.125\,\frac{n}{\beta} = 26\,\alpha
\quad\Longrightarrow\quad n_\times = \frac{26\,\alpha\beta}{2.125} \approx 11.0\ \text{MB}.
$$

比 $p = 8$ 的 7.92 MB 大。设备变多时，ring 的启动次数 $2(p-1)$ 线性增长，递归倍增的 $\log_2 p$ 只是对数增长，
ring 要靠更大的消息才能把多付的 α 用带宽优势赚回来。小于 $n_\times$ 时递归倍增更快，大于时 ring 更快。
代码按讲义的写法调用 `t_formula("ring", 16, n, 2e-6, 450e9)` 和 `t_formula("rd", ...)` 来验证。
""", r"""
Recursive doubling takes $\log_2 p$ steps that each exchange the whole buffer; the ring
takes $2(p-1)$ steps of $n/p$ each. For $p = 16$, set the two equal:

$$
4\left(\alpha + \frac{n}{\beta}\right) = 30\,\alpha + 1.875\,\frac{n}{\beta}
\quad\Longrightarrow\quad 2.125\,\frac{n}{\beta} = 26\,\alpha
\quad\Longrightarrow\quad n_\times = \frac{26\,\alpha\beta}{2.125} \approx 11.0\ \text{MB}.
$$

That is larger than the 7.92 MB of $p = 8$. With more devices the ring's start-ups,
$2(p-1)$, grow linearly while recursive doubling's $\log_2 p$ grows only
logarithmically, so the ring needs a bigger message before its bandwidth advantage pays
for the extra α. Below $n_\times$ recursive doubling is faster, above it the ring is.
The code checks this the way the lecture does, with `t_formula("ring", 16, n, 2e-6, 450e9)`
and `t_formula("rd", ...)`.
""")
code(r'''
n16 = crossover_rd_ring(16, NVLINK4.alpha, NVLINK4.beta)
n8 = crossover_rd_ring(8, NVLINK4.alpha, NVLINK4.beta)
print(f"n× (p = 16) = {n16 / MB:.2f} MB = 26αβ/2.125,  n× (p = 8) = {n8 / MB:.2f} MB")
assert same(n16, 26 * 2e-6 * 450e9 / 2.125)
assert rounds_to(n16 / MB, 11.0, 0.1) and rounds_to(n8 / MB, 7.92, 0.01) and n16 > n8

for n in (n16 / 2, n16, 2 * n16):
    ring, rd = t_formula("ring", 16, n, 2e-6, 450e9), t_formula("rd", 16, n, 2e-6, 450e9)
    print(f"n = {n / MB:6.2f} MB:  ring {ring / us:6.2f} µs,  rd {rd / us:6.2f} µs")
assert same(t_formula("ring", 16, n16, 2e-6, 450e9), t_formula("rd", 16, n16, 2e-6, 450e9))
assert t_formula("rd", 16, n16 / 2, 2e-6, 450e9) < t_formula("ring", 16, n16 / 2, 2e-6, 450e9)
assert t_formula("ring", 16, 2 * n16, 2e-6, 450e9) < t_formula("rd", 16, 2 * n16, 2e-6, 450e9)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-p5-ex-4)=
## 练习 4 · 一次 all-gather 要多久

一个节点里的 8 块 H100 用 NVLink 相连。一个 bf16 张量，形状 [1024, 16384]，按行平均切给 8 块 GPU，现在要做 all-gather
把完整张量拼回每块 GPU。只看带宽时要多久？把启动延迟也算上呢？
""", r"""
(en-p5-ex-4)=
## Exercise 4 · How long does one all-gather take?

The 8 H100s of one node are connected by NVLink. A bf16 tensor of shape [1024, 16384] is
split by rows into 8 equal shards, one per GPU, and an all-gather rebuilds the full
tensor on every GPU. How long does it take if only bandwidth counts? And with the
start-up latency included?
""")
solution(r"""
完整张量有 $1024 \times 16384 \times 2 = 33{,}554{,}432$ 字节，约 33.6 MB。ring all-gather 中每块 GPU 要收到另外 7 份，
即 $\frac{7}{8} \times 33.6$ MB ≈ 29.4 MB；按 450 GB/s 算约 65 µs。ring 走 7 步，每步再付一次 α，$7\alpha = 14$ µs，合计约 79 µs。
How to Scale Your Model 第 12 章的同一道题只算带宽，也得到约 65 µs。
""", r"""
The full tensor is $1024 \times 16384 \times 2 = 33{,}554{,}432$ bytes, about 33.6 MB. In
a ring all-gather every GPU must receive the other 7 shards, $\frac{7}{8} \times 33.6$ MB
≈ 29.4 MB, which at 450 GB/s takes about 65 µs. The ring has 7 steps and each pays α
once more, $7\alpha = 14$ µs, for about 79 µs in total. Chapter 12 of How to Scale Your
Model works the same problem with bandwidth only and also gets about 65 µs.
""")
code(r'''
n = 1024 * 16384 * 2                                  # bytes of the full bf16 tensor
received = 7 / 8 * n
t_bw = t_all_gather("ring", 8, n, 0.0, NVLINK4.beta)  # bandwidth term only
t_all = t_all_gather("ring", 8, n, NVLINK4.alpha, NVLINK4.beta)
t_sim = all_gather(VirtualCluster(Switch(8, NVLINK4)), nbytes=n).time
print(f"{tr('张量', 'tensor')} {n:,} B = {n / MB:.2f} MB;  {tr('每块 GPU 收到', 'each GPU receives')} "
      f"{received / MB:.2f} MB")
print(f"{tr('只算带宽', 'bandwidth only')}: {t_bw / us:.2f} µs;  + 7α = {7 * NVLINK4.alpha / us:.0f} µs: "
      f"{t_all / us:.2f} µs ({tr('模拟器', 'simulator')}: {t_sim / us:.2f} µs)")
assert n == 33_554_432 and rounds_to(n / MB, 33.6, 0.1) and rounds_to(received / MB, 29.4, 0.1)
assert same(t_bw, received / NVLINK4.beta) and rounds_to(t_bw / us, 65, 1)
assert rounds_to(7 * NVLINK4.alpha / us, 14, 1)
assert same(t_all, t_sim) and rounds_to(t_all / us, 79, 1)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 5
md(r"""
(zh-p5-ex-5)=
## 练习 5 · all-to-all 的两个下界

64 块 GPU 接在同一台无阻塞交换机上，每块 GPU 的端口是 50 GB/s。每块 GPU 有 64 MB 数据要做 all-to-all。
对分带宽给出的下界和出口带宽给出的下界分别是多少？真正起作用的是哪一个？
""", r"""
(en-p5-ex-5)=
## Exercise 5 · The two lower bounds of all-to-all

64 GPUs hang off one non-blocking switch, each through a 50 GB/s port, and each GPU
holds 64 MB for an all-to-all. What lower bound does the bisection bandwidth give, and
what bound does each GPU's egress bandwidth give? Which one actually limits the exchange?
""")
solution(r"""
- **对分下界。** 把 64 块 GPU 分成两半，每块 GPU 要把一半数据送到另一半，每个方向过中线的字节是
  $p\,n/4 = 64 \times 64\ \text{MB}/4 = 1.024$ GB。中线上有 32 个端口，对分带宽 $32 \times 50 = 1600$ GB/s，所以至少 0.64 ms。
- **出口下界。** 每块 GPU 要把自己数据的 $\frac{63}{64}$ 发出去，只能走自己的 50 GB/s 端口：$\frac{63}{64} \times 64\ \text{MB}/50\ \text{GB/s} \approx 1.26$ ms。

出口下界更大，是它在起作用：无阻塞交换机内部不缺带宽，瓶颈在每块 GPU 自己的端口。
""", r"""
- **Bisection bound.** Split the 64 GPUs into two halves. Every GPU sends half of its
  data to the other half, so $p\,n/4 = 64 \times 64\ \text{MB}/4 = 1.024$ GB cross the
  cut in each direction. The cut has 32 ports, a bisection bandwidth of
  $32 \times 50 = 1600$ GB/s, so this takes at least 0.64 ms.
- **Egress bound.** Every GPU must send $\frac{63}{64}$ of its data out through its own
  50 GB/s port: $\frac{63}{64} \times 64\ \text{MB}/50\ \text{GB/s} \approx 1.26$ ms.

The egress bound is the larger one, so it is the one that binds: a non-blocking switch
has bandwidth to spare inside, and the bottleneck is each GPU's own port.
""")
code(r'''
p, n = 64, 64 * MB
bisection_bw = Switch(p, IB_NDR).bisection_bandwidth
egress, bisection = all_to_all_bounds(p, n, IB_NDR.beta, bisection_bw)
print(f"p·n/4 = {p * n / 4 / GB:.3f} GB;  {tr('对分带宽', 'bisection bandwidth')} {bisection_bw / GB:.0f} GB/s")
print(f"{tr('对分下界', 'bisection bound')} {bisection / ms:.3f} ms,  {tr('出口下界', 'egress bound')} {egress / ms:.3f} ms")
assert IB_NDR.beta == 50 * GB
assert rounds_to(p * n / 4 / GB, 1.024, 0.001) and rounds_to(bisection_bw / GB, 1600, 1)
assert rounds_to(bisection / ms, 0.64, 0.01) and rounds_to(egress / ms, 1.26, 0.01)
assert egress > bisection
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 6
md(r"""
(zh-p5-ex-6)=
## 练习 6 · 层次化 all-reduce

4 个节点，每个节点 8 块 GPU（节点内 NVLink 450 GB/s，节点间每块 GPU 一块 50 GB/s 的 InfiniBand 网卡），all-reduce 512 MB。
只算带宽项，估计层次化算法每个阶段的时间和总时间，再与 32 块 GPU 直接做一个扁平 ring 比较。
""", r"""
(en-p5-ex-6)=
## Exercise 6 · Hierarchical all-reduce

Four nodes of 8 GPUs each (NVLink at 450 GB/s inside a node, one 50 GB/s InfiniBand NIC
per GPU between nodes) all-reduce 512 MB. Counting bandwidth terms only, estimate the
time of each phase of the hierarchical algorithm and the total, and compare with one
flat ring over all 32 GPUs.
""")
solution(r"""
1. **节点内 reduce-scatter（NVLink）：** $\frac{7}{8} \times 512\ \text{MB}/450\ \text{GB/s} \approx 1.0$ ms，之后每块 GPU 握有 64 MB 的部分和。
2. **节点间 all-reduce（InfiniBand）：** 8 条"轨道"同时各跑一个 4 节点的 ring，每个处理 64 MB：
   $2 \times \frac{3}{4} \times 64\ \text{MB}/50\ \text{GB/s} = 1.92$ ms。
3. **节点内 all-gather（NVLink）：** 与第 1 步对称，约 1.0 ms。

合计约 3.9 ms。扁平 ring 的每一步都要等跨节点的慢链路：$2 \times \frac{31}{32} \times 512\ \text{MB}/50\ \text{GB/s} \approx 19.8$ ms。
层次化算法快约 5 倍，因为它让 InfiniBand 只搬 $1/8$ 的数据，其余都在快 9 倍的 NVLink 上完成。
""", r"""
1. **Reduce-scatter inside each node (NVLink):** $\frac{7}{8} \times 512\ \text{MB}/450\ \text{GB/s} \approx 1.0$ ms;
   afterwards each GPU holds a 64 MB partial sum.
2. **All-reduce across nodes (InfiniBand):** the 8 "rails" each run a 4-node ring at the
   same time, on 64 MB each: $2 \times \frac{3}{4} \times 64\ \text{MB}/50\ \text{GB/s} = 1.92$ ms.
3. **All-gather inside each node (NVLink):** the mirror of phase 1, about 1.0 ms.

The total is about 3.9 ms. A flat ring waits for the slow inter-node links in every
step: $2 \times \frac{31}{32} \times 512\ \text{MB}/50\ \text{GB/s} \approx 19.8$ ms.
The hierarchical algorithm is about 5 times faster because InfiniBand only carries
$1/8$ of the data; everything else moves over NVLink, which is 9 times faster.
""")
code(r'''
n = 512 * MB
nv0 = Link("NVLink, bandwidth only", 0.0, NVLINK4.beta, "exercise 6: α = 0")
ib0 = Link("InfiniBand, bandwidth only", 0.0, IB_NDR.beta, "exercise 6: α = 0")
rs = t_reduce_scatter("ring", 8, n, 0.0, nv0.beta)
inter = t_formula("ring", 4, n / 8, 0.0, ib0.beta)
ag = t_all_gather("ring", 8, n, 0.0, nv0.beta)
total = rs + inter + ag

cluster = VirtualCluster(TwoLevel(4, 8, nv0, ib0))
hier = all_reduce(cluster, nbytes=n, algorithm="hierarchical").time
flat = all_reduce(cluster, nbytes=n).time
print(f"reduce-scatter {rs / ms:.4f} ms + {tr('节点间', 'inter-node')} all-reduce {inter / ms:.4f} ms "
      f"+ all-gather {ag / ms:.4f} ms = {total / ms:.4f} ms ({tr('模拟器', 'simulator')}: {hier / ms:.4f} ms)")
print(f"{tr('扁平 ring', 'flat ring')}: {flat / ms:.3f} ms = {flat / hier:.2f} × {tr('层次化', 'hierarchical')}")
assert same(total, hier) and same(total, t_allreduce_hierarchical(4, 8, n, nv0, ib0))
assert rounds_to(rs / ms, 1.0, 0.1) and rounds_to(ag / ms, 1.0, 0.1)
assert rounds_to(inter / ms, 1.92, 0.01) and rounds_to(total / ms, 3.9, 0.1)
assert same(flat, 2 * 31 / 32 * n / IB_NDR.beta) and rounds_to(flat / ms, 19.8, 0.1)
assert rounds_to(flat / hier, 5, 1)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 7
md(r"""
(zh-p5-ex-7)=
## 练习 7 · 张量并行的通信账 💻

Llama-3.1-8B（32 层，$d_\text{model}$ = 4096）用 TP = 4、batch B = 16 做 decode。每一步要做几次 all-reduce？每次多少字节？
在 NVLink（α = 2 µs，β = 450 GB/s）上用 ring 和用递归倍增各要多久？
""", r"""
(en-p5-ex-7)=
## Exercise 7 · The communication bill of tensor parallelism 💻

Llama-3.1-8B (32 layers, $d_\text{model}$ = 4096) decodes with TP = 4 and batch B = 16.
How many all-reduces does one step need, and how many bytes does each carry? How long do
they take on NVLink (α = 2 µs, β = 450 GB/s) with the ring, and with recursive doubling?
""")
solution(r"""
Megatron 式张量并行每层做两次 all-reduce（注意力之后一次，MLP 之后一次），所以每步 $2 \times 32 = 64$ 次。
每次的消息是 $B \times d_\text{model} \times 2$ 字节 $= 16 \times 4096 \times 2 = 131{,}072$ 字节（131 KB），在 NVLink 上传一遍 $n/\beta \approx 0.29$ µs。

- ring（$p = 4$）：$6\alpha + 1.5\,n/\beta \approx 12 + 0.44 = 12.4$ µs，64 次共约 0.80 ms。
- 递归倍增：$2(\alpha + n/\beta) = 2 \times (2 + 0.29) \approx 4.6$ µs，64 次共约 0.29 ms。

消息远小于 NVLink 的半带宽点（900 KB），时间几乎全是 α，步数少的递归倍增快将近 3 倍。
代码按讲义的写法用 `t_formula("ring", 4, 131072, 2e-6, 450e9)` 验证，并与 `commbook.llm.tp_comm_time` 对照。
""", r"""
Megatron-style tensor parallelism does two all-reduces per layer (one after attention,
one after the MLP), so a step needs $2 \times 32 = 64$ of them. Each carries
$B \times d_\text{model} \times 2$ bytes $= 16 \times 4096 \times 2 = 131{,}072$ bytes
(131 KB); one pass over NVLink takes $n/\beta \approx 0.29$ µs.

- Ring ($p = 4$): $6\alpha + 1.5\,n/\beta \approx 12 + 0.44 = 12.4$ µs, about 0.80 ms for all 64.
- Recursive doubling: $2(\alpha + n/\beta) = 2 \times (2 + 0.29) \approx 4.6$ µs, about 0.29 ms for all 64.

The message is far below NVLink's half-bandwidth point (900 KB), so the time is almost
all α, and recursive doubling, with fewer steps, is nearly 3 times faster. The code checks
this the lecture's way, with `t_formula("ring", 4, 131072, 2e-6, 450e9)`, and against
`commbook.llm.tp_comm_time`.
""")
code(r'''
count = tp_allreduces_per_step(LLAMA31_8B)
n = tp_message_bytes(LLAMA31_8B, tokens=16)
ring = t_formula("ring", 4, 131072, 2e-6, 450e9)
rd = t_formula("rd", 4, 131072, 2e-6, 450e9)
print(tr(f"每步 {count} 次 all-reduce，每次 {n:,.0f} B", f"{count} all-reduces per step, {n:,.0f} B each")
      + f";  n/β = {n / NVLINK4.beta / us:.4f} µs")
print(f"ring: {ring / us:.3f} µs × {count} = {count * ring / ms:.4f} ms")
print(f"rd:   {rd / us:.3f} µs × {count} = {count * rd / ms:.4f} ms")
assert count == 64 and n == 131_072 and rounds_to(n / NVLINK4.beta / us, 0.29, 0.01)
assert rounds_to(ring / us, 12.4, 0.1) and rounds_to(count * ring / ms, 0.80, 0.01)
assert rounds_to(rd / us, 4.6, 0.1) and rounds_to(count * rd / ms, 0.29, 0.01)
assert same(tp_comm_time(LLAMA31_8B, tokens=16, tp=4), count * ring)
assert same(tp_comm_time(LLAMA31_8B, tokens=16, tp=4, algorithm="rd"), count * rd)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 8
md(r"""
(zh-p5-ex-8)=
## 练习 8 · 搬运 KV cache

一个用 MHA 的模型：80 层，64 个 KV 头，每头 $d_\text{head}$ = 128，KV 用 BF16 存。一条 8192 token 的提示，它的 KV cache 有多大？
经一块 50 GB/s 的网卡传过去要多久？如果改成 GQA（8 个 KV 头）呢？GQA 之外再把 KV 存成 FP8 呢？
""", r"""
(en-p5-ex-8)=
## Exercise 8 · Moving the KV cache

A model with MHA attention has 80 layers and 64 KV heads of $d_\text{head}$ = 128, with
the KV cache stored in BF16. How large is the KV cache of one 8192-token prompt, and how
long does it take to send it through one 50 GB/s NIC? What if the model used GQA with 8
KV heads instead, and what if on top of that the cache were stored in FP8?
""")
solution(r"""
每个 token 每层存一份 K、一份 V：$2 \times 80 \times 64 \times 128 \times 2 = 2{,}621{,}440$ 字节 ≈ 2.62 MB。
乘以 8192 个 token 得约 21.5 GB，一块 50 GB/s 的网卡要约 430 ms。

- GQA-8：KV 头少到 1/8，约 2.68 GB，约 54 ms。
- 再用 FP8：每个值 1 字节，再减半，约 1.34 GB，约 27 ms。

（代码里的传输时间还包含一次 α = 5 µs，相对几十毫秒可以忽略。）
""", r"""
Each token stores one K and one V in every layer:
$2 \times 80 \times 64 \times 128 \times 2 = 2{,}621{,}440$ bytes ≈ 2.62 MB. Times 8192
tokens that is about 21.5 GB, which one 50 GB/s NIC sends in about 430 ms.

- GQA-8: one eighth of the KV heads, about 2.68 GB and 54 ms.
- Plus FP8: one byte per value halves it again, about 1.34 GB and 27 ms.

(The transfer times in the code also include one α = 5 µs, negligible next to tens of
milliseconds.)
""")
code(r'''
mha = LLAMA31_70B_MHA
gqa = replace(mha, n_kv_heads=8)
assert mha.n_layers == 80 and mha.n_kv_heads == 64 and mha.head_dim == 128
assert gqa.kv_bytes_per_token() == LLAMA31_70B.kv_bytes_per_token()
per_token = mha.kv_bytes_per_token()
print(f"{tr('每 token', 'per token')}: {per_token:,.0f} B = {per_token / MB:.3f} MB")
assert per_token == 2 * 80 * 64 * 128 * 2 and rounds_to(per_token / MB, 2.62, 0.01)

cases = (("MHA, BF16", mha, 2, 21.5, 0.1, 430, 10),
         ("GQA-8, BF16", gqa, 2, 2.68, 0.01, 54, 1),
         ("GQA-8, FP8", gqa, 1, 1.34, 0.01, 27, 1))
for name, model, nbytes, size_stated, size_step, t_stated, t_step in cases:
    size = kv_bytes(model, tokens=8192, bytes_per_value=nbytes)
    t = kv_transfer_time(model, tokens=8192, nics=1, link=IB_NDR, bytes_per_value=nbytes)
    print(f"{name:12s} {size / GB:7.3f} GB  {t / ms:7.2f} ms")
    assert rounds_to(size / GB, size_stated, size_step) and rounds_to(t / ms, t_stated, t_step)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 9
md(r"""
(zh-p5-ex-9)=
## 练习 9 · 流水线广播的最优分块

8 个设备用 ICI 相连（α = 1 µs，β = 45 GB/s），沿一条链广播 8 MB，把消息切成 $k$ 块流水线传输。
用公式求最优块数 $k^*$ 和对应的时间 $T^*$。
""", r"""
(en-p5-ex-9)=
## Exercise 9 · The best chunk count for a pipelined broadcast

Eight devices connected by ICI (α = 1 µs, β = 45 GB/s) broadcast 8 MB along a chain,
with the message cut into $k$ chunks that flow through the chain as a pipeline. Use the
formula to find the optimal chunk count $k^*$ and the time $T^*$ it gives.
""")
solution(r"""
链式流水线要走 $p - 2 + k$ 步，每步传一块：$T(k) = (p-2+k)\left(\alpha + \frac{n}{k\beta}\right)$。对 $k$ 求导令其为零：

$$
k^* = \sqrt{\frac{(p-2)\,n}{\alpha\beta}} = \sqrt{\frac{6 \times 8\times10^{6}}{10^{-6} \times 45\times10^{9}}} = \sqrt{1067} \approx 33,
\qquad
T^* = \left(\sqrt{(p-2)\,\alpha} + \sqrt{n/\beta}\right)^2 = \left(\sqrt{6\ \mu\text{s}} + \sqrt{177.8\ \mu\text{s}}\right)^2 = (2.45 + 13.33)^2 \approx 249\ \mu\text{s}.
$$

讲义代码 03 演示 4 在模拟器里取 $k = 32$，得 249.11 µs。最优点附近 $T(k)$ 很平：$k = 33$ 只再快约 0.01 µs。
""", r"""
The chain pipeline takes $p - 2 + k$ steps of one chunk each:
$T(k) = (p-2+k)\left(\alpha + \frac{n}{k\beta}\right)$. Setting the derivative in $k$ to zero gives

$$
k^* = \sqrt{\frac{(p-2)\,n}{\alpha\beta}} = \sqrt{\frac{6 \times 8\times10^{6}}{10^{-6} \times 45\times10^{9}}} = \sqrt{1067} \approx 33,
\qquad
T^* = \left(\sqrt{(p-2)\,\alpha} + \sqrt{n/\beta}\right)^2 = \left(\sqrt{6\ \mu\text{s}} + \sqrt{177.8\ \mu\text{s}}\right)^2 = (2.45 + 13.33)^2 \approx 249\ \mu\text{s}.
$$

Demo 4 of the lecture's code 03 runs the simulator with $k = 32$ and gets 249.11 µs. The
curve is flat near the optimum: $k = 33$ is only about 0.01 µs faster.
""")
code(r'''
p, n, a, b = 8, 8 * MB, ICI_V5E.alpha, ICI_V5E.beta
k_star, t_star = chain_broadcast_optimum(p, n, a, b)
print(f"k* = sqrt({(p - 2) * n / (a * b):.1f}) = {k_star:.2f};  "
      f"T* = ({math.sqrt((p - 2) * a / us):.2f} + {math.sqrt(n / b / us):.2f})² µs = {t_star / us:.2f} µs")
assert rounds_to((p - 2) * n / (a * b), 1067, 1) and rounds_to(k_star, 33, 1)
assert rounds_to(n / b / us, 177.8, 0.1)
assert rounds_to(math.sqrt((p - 2) * a / us), 2.45, 0.01) and rounds_to(math.sqrt(n / b / us), 13.33, 0.01)
assert rounds_to(t_star / us, 249, 1)

cluster = VirtualCluster(Switch(p, ICI_V5E))
for k in (32, 33):
    t_sim = broadcast(cluster, nbytes=n, algorithm="chain", chunks=k).time
    assert same(t_sim, t_broadcast("chain", p, n, a, b, chunks=k))
    print(f"{tr('模拟器', 'simulator')}, k = {k}: {t_sim / us:.3f} µs")
    if k == 32:
        assert rounds_to(t_sim / us, 249.11, 0.01)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 10
md(r"""
(zh-p5-ex-10)=
## 练习 10 · MoE 分发的节点数限制

DeepSeek-V3 规定每个 token 最多只能路由到 4 个节点上的专家。如果取消这条限制，一个 token 选中的 8 个专家可能分布在 8 个不同节点上。
这时跨节点的分发字节最多会变成原来的多少倍？
""", r"""
(en-p5-ex-10)=
## Exercise 10 · Capping the nodes of MoE dispatch

DeepSeek-V3 routes each token to experts on at most 4 nodes. Without that cap, the 8
experts a token picks could sit on 8 different nodes. By how much could the cross-node
bytes of the dispatch grow, at most?
""")
solution(r"""
不加限制时，最坏的情形是一个 token 得给 8 个节点每个都送一份，跨节点（InfiniBand）共 $8d$ 字节（FP8 分发，每个值 1 字节）。
加了限制，最多发往 4 个节点：每份先发到目标节点上编号相同的那块 GPU，再在节点内经 NVLink 转给该节点上选中的各个专家，所以最多 $4d$ 字节。
取消限制最多会让跨节点字节翻倍；反过来说，这条限制把它们最多减半。代价是路由多了一个约束，选出的专家可能不是最优的那几个。
""", r"""
Without the cap, in the worst case a token sends one copy to each of 8 nodes: $8d$
bytes over InfiniBand (with FP8 dispatch, one byte per value). With the cap it reaches
at most 4 nodes: each copy goes to the GPU with the same index on the target node, which
forwards it over NVLink to the selected experts on that node, so at most $4d$ bytes.
Dropping the cap can therefore double the cross-node bytes; put the other way, the cap
at most halves them. The price is one more constraint on routing, which may steer a
token away from its best experts.
""")
code(r'''
d = DEEPSEEK_V3.d_model
free = moe_cross_node_bytes(DEEPSEEK_V3, tokens=1, bytes_per_value=1)
capped = moe_cross_node_bytes(DEEPSEEK_V3, tokens=1, bytes_per_value=1, max_nodes=DEEPSEEK_V3.max_nodes_per_token)
print(f"d = {d}:  {tr('不限制', 'uncapped')} {free:,.0f} B = {free / d:.0f}d,  "
      f"{tr('最多 4 个节点', 'at most 4 nodes')} {capped:,.0f} B = {capped / d:.0f}d,  {free / capped:.1f} ×")
assert DEEPSEEK_V3.top_k == 8 and DEEPSEEK_V3.max_nodes_per_token == 4
assert free == 8 * d and capped == 4 * d and free / capped == 2
print(AGREES)
''')


# ----------------------------------------------------------------------------- build
def build(lang: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(CELLS):
        if cell[0] == "md":
            c = nbformat.v4.new_markdown_cell(cell[1][lang])
        else:
            c = nbformat.v4.new_code_cell(cell[1].replace("{LANG}", lang))
            if cell[2]:
                c.metadata["tags"] = cell[2]
        c.id = f"p5-{i:02d}"
        nb.cells.append(c)
    return nb


def main(argv: list[str]) -> None:
    execute = "--no-exec" not in argv
    for lang in ("zh", "en"):
        nb = build(lang)
        path = ROOT / "exercises" / lang / "p5.ipynb"
        if execute:
            NotebookClient(nb, kernel_name="python3", timeout=300, record_timing=False,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.validate(nb)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])

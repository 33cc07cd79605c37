# SPDX-License-Identifier: BSD-3-Clause
"""Plot `wsp-bench coll` or `wsp-bench shuffle` JSON lines.

coll: busbw against message size.

One subplot per (collective, p, label); in each, one line per algorithm
with busbw (GB/s = 1e9 bytes/s, as nccl-tests) against the message size S
(log axis; S as wsp-bench and nccl-tests define it: the whole message for
bcast/reduce/allreduce, the p-block buffer for the others). The plain MPI
collective ("mpi") and wirespeed's "auto" are drawn bold; rows whose result
check failed are marked with a red x. Several rows for the same point (from
several files or runs) are reduced to their median.

    /usr/bin/python3 python/wsp_report coll results.json --out coll.png
    /usr/bin/python3 python/wsp_report coll a.json b.json --out c.png --link-gbps 1

shuffle: goodput over time, one line per strategy (the mean over hosts of
the response payload each host received per second from other hosts), with
the range from the slowest to the fastest host shaded, as a fraction of the
link rate B when the run knew it (--link-rate), else in Mbit/s. One subplot
per (p, label). The input decides which plot is drawn (coll rows win when a
file holds both; --bench chooses).

Needs matplotlib (Debian: apt install python3-matplotlib; the python3 of
pyenv or a virtualenv may lack it: use /usr/bin/python3).
"""
import argparse
import collections
import math
import statistics
import sys

from . import jsonl


def load(paths, bench="coll"):
    return jsonl.load(paths, bench, prog="wirespeed-report plot")


def fmt_size(b, _pos=None):
    b = int(round(b))
    for unit, k in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << k and b % (1 << k) == 0:
            return f"{b >> k}{unit}"
    return str(b)


SHUFFLE_ORDER = ["s1", "s2", "s3", "fixed", "adaptive"]
SHUFFLE_STYLE = {"s1": dict(color="tab:gray"), "s2": dict(color="tab:orange"),
                 "s3": dict(color="tab:blue"), "fixed": dict(color="tab:purple"),
                 "adaptive": dict(color="tab:red", linewidth=2.4)}


def save(fig, axes, n, nrows, ncols, a):
    """Hides the unused subplots of the grid, adds the title, writes a.out."""
    for j in range(n, nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    try:
        fig.savefig(a.out, dpi=110)
    except OSError as e:
        sys.exit(f"wirespeed-report: cannot write {a.out}: {e}")
    print(f"wirespeed-report: wrote {a.out} ({n} subplot{'s' if n != 1 else ''})")


def plot_shuffle(rows, a, plt):
    """Goodput per second of each strategy: mean over hosts, min..max shaded."""
    groups = collections.OrderedDict()
    for r in rows:
        if r.get("kind") != "second":
            continue
        key = (r["p"], r.get("label", ""))
        groups.setdefault(key, collections.OrderedDict()).setdefault(
            r["strategy"], []).append(r)
    if not groups:
        sys.exit("wirespeed-report: no per-second shuffle rows in the input")
    keys = sorted(groups)
    n = len(keys)
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(8.0 * ncols, 4.4 * nrows),
                             squeeze=False)
    for i, key in enumerate(keys):
        ax = axes[i // ncols][i % ncols]
        p, label = key
        strategies = sorted(groups[key], key=lambda s: (SHUFFLE_ORDER.index(s)
                                                        if s in SHUFFLE_ORDER else 99, s))
        link = None
        for strat in strategies:
            pts = sorted(groups[key][strat], key=lambda r: r["t"])
            link = link or pts[0].get("link_Bps")
            scale = (1.0 / link) if link else 8e-6
            ts = [r["t"] + 0.5 for r in pts]
            hv = [r["goodput_host_Bps"] for r in pts]
            mean = [statistics.fmean(h) * scale for h in hv]
            lo = [min(h) * scale for h in hv]
            hi = [max(h) * scale for h in hv]
            style = dict(linewidth=1.4)
            style.update(SHUFFLE_STYLE.get(strat, {}))
            line, = ax.plot(ts, mean, label=strat, **style)
            ax.fill_between(ts, lo, hi, color=line.get_color(), alpha=0.12)
        if link:
            ax.axhline(1.0, color="black", linestyle=":", linewidth=1,
                       label=f"B = {link * 8e-6:g} Mbit/s")
            ax.set_ylabel("goodput per host / B")
        else:
            ax.set_ylabel("goodput per host (Mbit/s)")
        ax.set_xlabel("time (s)")
        hosts = groups[key][strategies[0]][0].get("hosts", "?")
        ax.set_title(f"p = {p}, {hosts} hosts" + (f", {label}" if label else ""))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", ncol=3)
    save(fig, axes, n, nrows, ncols, a)


def plot_p2p(rows, a, plt):
    """One message between two ranks: rate (or rate / link) against size for MPI_Send,
    striped k and auto; iperf3 -P k as dotted lines."""
    from matplotlib.ticker import FuncFormatter
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r["p"], r.get("label", "")), []).append(r)
    keys = sorted(groups)
    n = len(keys)
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.6 * ncols, 4.6 * nrows), squeeze=False)
    for i, key in enumerate(keys):
        ax = axes[i // ncols][i % ncols]
        rs = groups[key]
        link = next((r["link_Bps"] for r in rs if r.get("link_Bps")), None)
        scale = (1.0 / link) if link else 8e-6
        series = collections.OrderedDict()
        for r in rs:
            if r.get("kind") != "transfer":
                continue
            name = "MPI_Send" if r["method"] == "mpi" else "striped %s" % r["lanes"]
            if r.get("encrypt"):
                name += " sealed"
            series.setdefault(name, {}).setdefault(r["bytes"], []).append(r["rate_Bps"])
        cmap = plt.get_cmap("viridis")
        ks = sorted({int(k.split()[1]) for k in series if k.split()[1].isdigit()})
        for name, pts in series.items():
            xs = sorted(pts)
            ys = [statistics.median(pts[x]) * scale for x in xs]
            style = dict(marker="o", markersize=3, linewidth=1.2)
            if name == "MPI_Send":
                style.update(color="black", linewidth=2)
            elif name.split()[1] == "auto":
                style.update(color="red", linewidth=2.2)
            else:
                k = int(name.split()[1])
                style.update(color=cmap(ks.index(k) / max(1, len(ks) - 1)), alpha=0.8)
            if name.endswith(" sealed"):
                style.update(linestyle="--")
            ax.plot(xs, ys, label=name, **style)
        for r in rs:
            if r.get("kind") == "iperf" and r["lanes"] in (1, max(ks or [1])):
                ax.axhline(r["rate_Bps"] * scale, color="gray", linestyle=":", linewidth=1)
                ax.annotate("iperf3 -P %d" % r["lanes"], (ax.get_xlim()[0], r["rate_Bps"] * scale),
                            fontsize="x-small", color="gray", va="bottom")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(fmt_size))
        ax.set_xlabel("message size")
        ax.set_ylabel("rate / link" if link else "rate (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.set_title(key[1] or "p = %d" % key[0])
        ax.legend(fontsize="x-small", ncol=3)
    save(fig, axes, n, nrows, ncols, a)


COLL_ORDER = ["bcast", "reduce", "allreduce", "gather", "scatter",
              "allgather", "alltoall"]


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="files written by wsp-bench coll --json")
    ap.add_argument("--out", default="wsp-coll.png", help="PNG to write (default %(default)s)")
    ap.add_argument("--title", default="", help="title above the subplots")
    ap.add_argument("--link-gbps", type=float, default=0.0,
                    help="link rate B in Gbit/s: draws a horizontal line at B/8 GB/s "
                         "(busbw at line rate)")
    ap.add_argument("--colls", default="", help="comma list of collectives to draw (default all)")
    ap.add_argument("--labels", default="", help="comma list of labels to draw (default all)")
    ap.add_argument("--logy", action="store_true", help="logarithmic busbw axis")
    ap.add_argument("--bench", choices=["auto", "coll", "shuffle", "p2p"], default="auto",
                    help="which rows to draw (default: coll if any, else shuffle, else p2p)")
    a = ap.parse_args(argv)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        sys.exit(f"wirespeed-report: matplotlib is not available to {sys.executable}; install "
                 "it (Debian/Ubuntu: apt install python3-matplotlib) and run this "
                 "script with /usr/bin/python3")

    rows = load(a.json) if a.bench in ("auto", "coll") else []
    labels = set(filter(None, a.labels.split(",")))
    for bench, plot in (("p2p", plot_p2p), ("shuffle", plot_shuffle)):
        if rows or a.bench not in ("auto", bench):
            continue
        brows = [r for r in load(a.json, bench) if not labels or r.get("label", "") in labels]
        if brows:
            plot(brows, a, plt)
            return
    colls = set(filter(None, a.colls.split(",")))
    rows = [r for r in rows
            if (not colls or r.get("coll") in colls)
            and (not labels or r.get("label", "") in labels)]
    if not rows:
        sys.exit("wirespeed-report: no wsp-bench coll rows in the input (after --colls/--labels)")

    # (coll, p, label) -> alg -> bytes -> [busbw], plus failed checks.
    groups = collections.OrderedDict()
    bad = collections.defaultdict(set)
    for r in rows:
        key = (r["coll"], r["p"], r.get("label", ""))
        g = groups.setdefault(key, collections.OrderedDict())
        g.setdefault(r["alg"], collections.defaultdict(list))[r["bytes"]].append(
            r["busbw_GBps"])
        if r.get("check", "ok") != "ok":
            bad[key].add((r["alg"], r["bytes"]))
    keys = sorted(groups, key=lambda k: (COLL_ORDER.index(k[0]) if k[0] in COLL_ORDER
                                         else len(COLL_ORDER), k[0], k[1], k[2]))

    n = len(keys)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.2 * nrows),
                             squeeze=False)
    link = a.link_gbps / 8.0 if a.link_gbps > 0 else 0.0
    for i, key in enumerate(keys):
        ax = axes[i // ncols][i % ncols]
        coll, p, label = key
        for alg, pts in groups[key].items():
            xs = sorted(pts)
            ys = [statistics.median(pts[x]) for x in xs]
            bold = alg in ("mpi", "auto")
            style = dict(marker="o", markersize=4 if bold else 3,
                         linewidth=2.6 if bold else 1.2, label=alg, zorder=3 if bold else 2)
            if alg == "mpi":
                style.update(color="black")
            elif alg == "auto":
                style.update(color="tab:red", linestyle="--")
            ax.plot(xs, ys, **style)
            fails = [(x, y) for x, y in zip(xs, ys) if (alg, x) in bad[key]]
            if fails:
                ax.plot([x for x, _ in fails], [y for _, y in fails], "x", color="red",
                        markersize=10, markeredgewidth=2, zorder=4)
        if link:
            ax.axhline(link, color="gray", linestyle=":", linewidth=1.5,
                       label=f"link {a.link_gbps:g} Gbit/s")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(fmt_size))
        if a.logy:
            ax.set_yscale("log")
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{coll}, p = {p}" + (f", {label}" if label else ""))
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    save(fig, axes, n, nrows, ncols, a)


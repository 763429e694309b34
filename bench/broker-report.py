#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tables for bench/broker.sh from broker-load's result lines and broker-sample.py's samples.

    broker-report.py RESULTS SAMPLES [META]

RESULTS: lines "phase=… round=… target=… <broker-load's key=value line>".
SAMPLES: lines "T_NS NAME CPU_NS UTIME STIME RSS_KB" (broker-sample.py).
META: optional "key value" lines from the suite (audit counts, request totals).
Prints Markdown. Medians over rounds; "+p50"/"+p99" are the target's percentile minus
direct-unix's in the same round and cell (the floor), then the median of those.
CPU µs/req is the named processes' CPU time (schedstat, all threads) between the run's
window start and end, interpolated between samples, divided by the answers in the window.
"""
import bisect
import statistics
import sys

TARGET_ORDER = ["direct-unix", "direct-tcp", "proxyd", "nginx", "broker", "broker-relay", "broker-nosb", "broker-base",
                "pyfake"]
# sampler names charged to each target as "proxy CPU"
PROXY_PROCS = {
    "proxyd": ["proxyd"],
    "nginx": ["nginx"],
    "broker": ["broker"],
    "broker-relay": ["broker", "shim"],
    "broker-nosb": ["broker-nosb"],
    "broker-base": ["broker-base"],
    "pyfake": ["pyfake"],
}


def load_results(path):
    runs = []
    with open(path) as f:
        for line in f:
            d = {}
            for tok in line.split():
                k, _, v = tok.partition("=")
                d[k] = v
            if "rps" not in d:
                d.setdefault("error", "?")
            runs.append(d)
    return runs


def load_samples(path):
    s = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 6:
                continue
            s.setdefault(p[1], []).append((int(p[0]), int(p[2]), int(p[3]), int(p[4]), int(p[5])))
    for v in s.values():
        v.sort()
    return s


def at(series, t, field=1):
    """Linear interpolation of a cumulative counter at time t."""
    if not series:
        return None
    ts = [x[0] for x in series]
    i = bisect.bisect_left(ts, t)
    if i == 0:
        return series[0][field]
    if i >= len(series):
        return series[-1][field]
    (t0, *a), (t1, *b) = series[i - 1], series[i]
    v0, v1 = a[field - 1], b[field - 1]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1


def cpu_ns(samples, names, t0, t1):
    tot = 0.0
    for n in names:
        s = samples.get(n)
        if not s:
            return None
        a, b = at(s, t0), at(s, t1)
        if a is None or b is None:
            return None
        tot += b - a
    return tot


def f(d, k):
    try:
        v = float(d.get(k, "nan"))
    except ValueError:
        return float("nan")
    return v


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def fmt(v, nd=0, plus=False):
    if v != v:
        return "–"
    s = ("%+." if plus else "%.") + str(nd) + "f"
    return s % v


def kib(n):
    return "%.0f B" % n if n < 1024 else "%.0f KiB" % (n / 1024)


def main():
    runs = load_results(sys.argv[1])
    samples = load_samples(sys.argv[2])
    meta = {}
    if len(sys.argv) > 3:
        try:
            with open(sys.argv[3]) as fh:
                for line in fh:
                    k, _, v = line.strip().partition(" ")
                    if k:
                        meta[k] = v
        except OSError:
            pass

    for r in runs:
        if "rps" not in r:
            continue
        t0, t1, ok = int(r["t_start"]), int(r["t_end"]), max(1, int(r["ok"]))
        names = PROXY_PROCS.get(r["target"], [])
        c = cpu_ns(samples, names, t0, t1) if names else None
        r["proxy_cpu"] = c / ok / 1000 if c is not None else float("nan")
        u = cpu_ns(samples, ["upstream"], t0, t1)
        r["up_cpu"] = u / ok / 1000 if u is not None and r["target"] not in ("direct-tcp", "pyfake") else float("nan")
        j = cpu_ns(samples, ["journald"], t0, t1)
        r["jd_cpu"] = j / ok / 1000 if j is not None else float("nan")

    errors = [r for r in runs if "rps" not in r or int(r.get("bad_status", 0)) or int(r.get("incomplete", 0))]

    # ---- main matrix -----------------------------------------------------------------
    main_runs = [r for r in runs if r.get("phase") == "main" and "rps" in r]
    cells = sorted({(int(r["stream"]), int(r["body"]), int(r["conns"])) for r in main_runs})
    base = {}
    for r in main_runs:
        if r["target"] == "direct-unix":
            base[(r["round"], r["stream"], r["body"], r["conns"])] = r
    rounds = sorted({r["round"] for r in main_runs})
    print("### Throughput and latency (%d round(s), medians)" % len(rounds))
    print()
    for stream in sorted({c[0] for c in cells}):
        for body in sorted({c[1] for c in cells if c[0] == stream}):
            print("**%s, %s request body**" % ("streamed (SSE)" if stream else "not streamed", kib(body)))
            print()
            print("| clients | target | req/s | vs nginx | p50 µs | p99 µs | +p50 µs | +p99 µs | proxy CPU µs/req | upstream CPU µs/req | journald CPU µs/req |")
            print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for conns in sorted({c[2] for c in cells if c[0] == stream and c[1] == body}):
                sel = [r for r in main_runs if int(r["stream"]) == stream and int(r["body"]) == body and int(r["conns"]) == conns]
                nginx_rps = med([f(r, "rps") for r in sel if r["target"] == "nginx"])
                for t in TARGET_ORDER:
                    rs = [r for r in sel if r["target"] == t]
                    if not rs:
                        continue
                    add50, add99 = [], []
                    for r in rs:
                        b = base.get((r["round"], r["stream"], r["body"], r["conns"]))
                        if b:
                            add50.append(f(r, "lat_p50") - f(b, "lat_p50"))
                            add99.append(f(r, "lat_p99") - f(b, "lat_p99"))
                    rps = med([f(r, "rps") for r in rs])
                    is_base = t == "direct-unix"
                    print("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        conns, ("**%s**" % t) if t.startswith("broker") else t, fmt(rps),
                        fmt(rps / nginx_rps, 2) if nginx_rps == nginx_rps and nginx_rps else "–",
                        fmt(med([f(r, "lat_p50") for r in rs]), 1), fmt(med([f(r, "lat_p99") for r in rs]), 1),
                        "–" if is_base else fmt(med(add50), 1, True), "–" if is_base else fmt(med(add99), 1, True),
                        fmt(med([r["proxy_cpu"] for r in rs]), 1), fmt(med([r["up_cpu"] for r in rs]), 1),
                        fmt(med([r["jd_cpu"] for r in rs]), 1)))
            print()

    # ---- SSE event delay -------------------------------------------------------------
    sse = [r for r in runs if r.get("phase") == "sse" and "rps" in r]
    if sse:
        gap = sse[0].get("gap_us")
        print("### SSE pass-through: per-event delay (events %s µs apart)" % gap)
        print()
        print("| clients | target | events | event delay p50 µs | p90 | p99 | max | +p50 over direct | time to headers p50 µs | streams/s |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        bases = {r["conns"]: r for r in sse if r["target"] == "direct-unix"}
        for conns in sorted({int(r["conns"]) for r in sse}):
            for t in TARGET_ORDER:
                for r in [r for r in sse if r["target"] == t and int(r["conns"]) == conns]:
                    b = bases.get(r["conns"])
                    print("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        conns, t, r["ev_n"], fmt(f(r, "ev_p50"), 1), fmt(f(r, "ev_p90"), 1), fmt(f(r, "ev_p99"), 1),
                        fmt(f(r, "ev_max"), 1),
                        fmt(f(r, "ev_p50") - f(b, "ev_p50"), 1, True) if b and t != "direct-unix" else "–",
                        fmt(f(r, "ttfb_p50"), 1), fmt(f(r, "rps"), 1)))
        print()

    # ---- the Python fake ---------------------------------------------------------------
    py = [r for r in runs if r.get("phase") == "pyfake" and "rps" in r]
    if py:
        print("### Upstream ceiling: tests/broker/fake-openai.py vs bench/broker-upstream.c, directly")
        print()
        print("| clients | streamed | upstream | req/s | p50 µs | p99 µs | upstream CPU µs/req |")
        print("|---:|---|---|---:|---:|---:|---:|")
        for r in sorted(py, key=lambda r: (int(r["stream"]), int(r["conns"]), r["target"])):
            print("| %s | %s | %s | %s | %s | %s | %s |" % (
                r["conns"], "yes" if r["stream"] == "1" else "no",
                "fake-openai.py" if r["target"] == "pyfake" else "broker-upstream.c",
                fmt(f(r, "rps")), fmt(f(r, "lat_p50"), 1), fmt(f(r, "lat_p99"), 1),
                fmt(r["proxy_cpu"] if r["target"] == "pyfake" else r["up_cpu"], 1)))
        print()

    # ---- audit ------------------------------------------------------------------------
    au = [r for r in runs if r.get("phase", "").startswith("audit") and "rps" in r]
    if au:
        print("### Audit records under load")
        print()
        print("| broker unit | req/s | answers (whole run) | journal records | journald CPU µs/req |")
        print("|---|---:|---:|---:|---:|")
        for r in au:
            ph = r["phase"]
            print("| %s | %s | %s | %s | %s |" % (
                {"audit-default": "as shipped (journald's default rate limit)",
                 "audit-norl": "with LogRateLimitIntervalSec=1s, LogRateLimitBurst=100000000"}.get(ph, ph),
                fmt(f(r, "rps")), r.get("total_ok"), meta.get("records-" + ph, "?"), fmt(r["jd_cpu"], 1)))
        if meta.get("suppressed"):
            print()
            print("journald: `%s`" % meta["suppressed"])
        print()

    # ---- memory ---------------------------------------------------------------------
    for name in ("broker", "broker-nosb", "broker-base", "nginx", "proxyd"):
        s = samples.get(name)
        if not s:
            continue
        # (the audit check "as shipped" went to an earlier broker process: "broker-shipped")
        total = sum(int(r.get("total_ok", 0)) for r in runs if r.get("target") in
                    ({"broker": ("broker", "broker-relay")}.get(name, (name,))) and
                    r.get("phase") != "audit-default")
        print("RSS of %s: first sample %d KiB, max %d KiB, last %d KiB; %d answers through it in this run" % (
            name, s[0][4], max(x[4] for x in s), s[-1][4], total))
    long = [r for r in runs if r.get("phase") == "long" and "rps" in r]
    if long and samples.get("broker"):
        s = samples["broker"]
        print()
        print("### Broker RSS during the long run")
        print()
        print("| after answers (cumulative, long run) | RSS KiB |")
        print("|---:|---:|")
        cum = 0
        for r in long:
            cum += int(r.get("total_ok", 0))
            t = int(r["t_end"])
            i = min(range(len(s)), key=lambda k: abs(s[k][0] - t))
            print("| %d | %d |" % (cum, s[i][4]))
        print()

    if errors:
        print("Runs with errors:")
        for r in errors:
            print("- %s %s round %s: conns=%s body=%s stream=%s bad_status=%s (first %s) incomplete=%s %s" % (
                r.get("phase"), r.get("target"), r.get("round"), r.get("conns"), r.get("body"), r.get("stream"),
                r.get("bad_status"), r.get("first_bad_status"), r.get("incomplete"), r.get("error", "")))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch's times on the shapes of an opbench sweep, beside kernbench's.

Usage:
    torch_baseline.py SWEEP.json OUT.json [--budget SECONDS]
    torch_baseline.py --self-test

Reads the records of an "opbench sweep" (its NAME.json) and times, on the
GPU PyTorch sees, the nearest PyTorch operation of each point:

    MUL_MAT f16, f32     torch.matmul in that type (f32 without TF32)
    MUL_MAT quantized    torch.matmul in f16 on the same shape: the dense
                         stand-in (cuBLAS on weights 3-4x the bytes)
    FLASH_ATTN_EXT       scaled_dot_product_attention in f16, flash
                         backend where torch has one (no mask)
    SOFT_MAX             torch.softmax over the rows
    RMS_NORM             x * rsqrt(mean(x^2) + eps)
    others               no counterpart (recorded as such)

and measures the bandwidth roof: a device-to-device copy of 1 GiB
(GB/s counted as bytes read plus bytes written). Each record gets
torch's median time, speed_vs_torch (torch's time over ours: 1.0 or more
is as fast as PyTorch or faster), roof_s (the point's bytes, from
opbench's cost model, at the copy bandwidth) and roof_pct (roof_s over
our time, in percent).

Without torch, or without a CUDA device in it, OUT.json says why and
holds our records alone; the exit status is 0 either way, so a script
that runs it goes on. Exit 2 is a bad command line or an unreadable
sweep. --budget stops timing new points after that many seconds (the
rest are recorded as skipped). OUT.json is rewritten after every point,
so a run cut off still leaves what it measured.

--self-test checks the shape mapping on built-in records and runs the
whole timing path against a stand-in torch module (no GPU, no torch).
"""

import json
import math
import os
import sys
import time

SCHEMA = "kernbench-torch-baseline/1"
QUANTIZED = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K",
             "q5_K", "q6_K", "iq4_nl", "iq4_xs", "mxfp4"}


def spec_of(rec):
    """Returns the PyTorch operation for an opbench record, as a dict
    (kind, dtype, shapes, note), or a dict with kind None and a note."""
    op, typ, d = rec.get("op", ""), rec.get("type", ""), rec.get("dims", {})
    if op == "MUL_MAT":
        m, n, k = d.get("m"), d.get("n"), d.get("k")
        if not (m and n and k):
            return {"kind": None, "note": "MUL_MAT without m, n and k"}
        batch = d.get("b", 1) or 1
        if typ in ("f16", "bf16", "f32"):
            return {"kind": "matmul", "dtype": typ, "a": [batch, n, k], "b": [batch, k, m],
                    "note": "torch.matmul %s" % typ}
        if typ in QUANTIZED:
            return {"kind": "matmul", "dtype": "f16", "a": [batch, n, k], "b": [batch, k, m],
                    "note": "torch.matmul f16 (dense stand-in for %s)" % typ}
        return {"kind": None, "note": "MUL_MAT %s: no torch counterpart" % typ}
    if op == "FLASH_ATTN_EXT":
        dh, heads, n, kv = d.get("d"), d.get("heads"), d.get("n"), d.get("kv")
        kvh = d.get("kv_heads", heads)
        if not (dh and heads and n and kv and kvh):
            return {"kind": None, "note": "FLASH_ATTN_EXT without d, heads, n and kv"}
        return {"kind": "sdpa", "dtype": "f16", "q": [1, heads, n, dh], "kv": [1, kvh, kv, dh],
                "note": "scaled_dot_product_attention f16 (K/V %s in ours), no mask" % typ}
    if op == "SOFT_MAX":
        kv, n, heads = d.get("kv"), d.get("n"), d.get("heads", 1)
        if not (kv and n):
            return {"kind": None, "note": "SOFT_MAX without kv and n"}
        return {"kind": "softmax", "dtype": "f32", "x": [heads, n, kv], "note": "torch.softmax f32"}
    if op == "RMS_NORM":
        k, n = d.get("k"), d.get("n")
        if not (k and n):
            return {"kind": None, "note": "RMS_NORM without k and n"}
        return {"kind": "rms_norm", "dtype": "f32", "x": [n, k], "note": "x*rsqrt(mean(x^2)+eps) f32"}
    return {"kind": None, "note": "%s: no torch counterpart" % op}


def ours_seconds(rec):
    """Our median time of a record, or None where the point was not timed
    (an emulated backend validates only)."""
    s = rec.get("median_s")
    if isinstance(s, (int, float)) and s > 0 and math.isfinite(s):
        return float(s)
    return None


def base_record(rec):
    return {
        "op": rec.get("op"), "type": rec.get("type"), "shape": rec.get("shape"),
        "label": rec.get("label"), "backend": rec.get("backend"),
        "ours_s": ours_seconds(rec), "bytes": rec.get("bytes"), "flops": rec.get("flops"),
        "validation": rec.get("validation"),
    }


class Timer:
    """Times a callable on the GPU with CUDA events: warm-up, then
    samples of enough iterations to fill target seconds; the median of
    the per-iteration times."""

    def __init__(self, torch, target=0.02, samples=5):
        self.torch, self.target, self.samples = torch, target, samples

    def __call__(self, fn):
        torch = self.torch
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        one = max(start.elapsed_time(end) / 1e3, 1e-7)
        iters = max(1, min(10000, int(self.target / one)))
        times = []
        for _ in range(self.samples):
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / iters)
        times.sort()
        return times[len(times) // 2]


def torch_callable(torch, spec):
    """Builds the inputs of spec on the GPU and returns (callable, note)."""
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[spec["dtype"]]
    dev = "cuda"
    kind = spec["kind"]
    if kind == "matmul":
        a = torch.randn(spec["a"], device=dev, dtype=dt)
        b = torch.randn(spec["b"], device=dev, dtype=dt)
        out = torch.empty(spec["a"][0], spec["a"][1], spec["b"][2], device=dev, dtype=dt)
        return (lambda: torch.matmul(a, b, out=out)), ""
    if kind == "sdpa":
        F = torch.nn.functional
        q = torch.randn(spec["q"], device=dev, dtype=dt)
        k = torch.randn(spec["kv"], device=dev, dtype=dt)
        v = torch.randn(spec["kv"], device=dev, dtype=dt)
        extra = {}
        if spec["kv"][1] != spec["q"][1]:
            try:
                F.scaled_dot_product_attention(q[:, :, :1], k[:, :, :1], v[:, :, :1], enable_gqa=True)
                extra = {"enable_gqa": True}
            except TypeError:
                rep = spec["q"][1] // spec["kv"][1]
                k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        call = lambda: F.scaled_dot_product_attention(q, k, v, **extra)
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            def flash():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return call()
            flash()
            return flash, "flash backend"
        except Exception as e:  # no flash backend for this shape or torch
            return call, "default backend (flash: %s)" % str(e).splitlines()[0][:120] if str(e) else "default backend"
    if kind == "softmax":
        x = torch.randn(spec["x"], device=dev, dtype=dt)
        return (lambda: torch.softmax(x, dim=-1)), ""
    if kind == "rms_norm":
        x = torch.randn(spec["x"], device=dev, dtype=dt)
        return (lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)), ""
    raise ValueError("unknown kind %r" % kind)


def copy_gbps(torch, timer, nbytes=1 << 30):
    src = torch.empty(nbytes // 4, device="cuda", dtype=torch.float32).fill_(1)
    dst = torch.empty_like(src)
    s = timer(lambda: dst.copy_(src))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * nbytes / s / 1e9


def write(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def fmt_s(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return "%.3g %s" % (s / scale, unit)
    return "%.3g ns" % (s / 1e-9)


def run(sweep_path, out_path, budget):
    try:
        with open(sweep_path) as f:
            sweep = json.load(f)
        recs = sweep["records"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("torch_baseline: %s: %s" % (sweep_path, e), file=sys.stderr)
        return 2
    doc = {"schema": SCHEMA, "sweep": os.path.basename(sweep_path), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "torch": None, "device": None, "error": None, "copy_gbps": None,
           "note": "speed_vs_torch is torch's time over ours (1.0 or more: as fast as PyTorch or faster); "
                   "roof_pct is the point's bytes at the measured copy bandwidth over our time",
           "records": [dict(base_record(r), **{"torch_op": spec_of(r)["note"]}) for r in recs]}
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        doc["error"] = "no torch: %s" % e
        write(out_path, doc)
        print("torch_baseline: %s; wrote our %d records alone to %s" % (doc["error"], len(recs), out_path))
        return 0
    doc["torch"] = torch.__version__
    if not torch.cuda.is_available():
        doc["error"] = "torch %s sees no CUDA device" % torch.__version__
        write(out_path, doc)
        print("torch_baseline: %s; wrote our records alone to %s" % (doc["error"], out_path))
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    doc["device"] = torch.cuda.get_device_name(0)
    timer = Timer(torch)
    start = time.monotonic()
    try:
        doc["copy_gbps"] = copy_gbps(torch, timer)
    except Exception as e:
        doc["copy_error"] = str(e)[:300]
    write(out_path, doc)
    print("%s, torch %s, copy %s GB/s" % (doc["device"], doc["torch"],
                                         "%.0f" % doc["copy_gbps"] if doc["copy_gbps"] else "?"))
    print("%-15s %-5s %-42s %10s %10s %7s %6s  %s" % ("op", "type", "shape", "ours", "torch", "vs torch", "roof%", "torch op"))
    for r, out in zip(recs, doc["records"]):
        spec = spec_of(r)
        if doc["copy_gbps"] and out["bytes"] and out["ours_s"]:
            out["roof_s"] = out["bytes"] / (doc["copy_gbps"] * 1e9)
            out["roof_pct"] = 100 * out["roof_s"] / out["ours_s"]
        if spec["kind"] is None:
            pass
        elif time.monotonic() - start > budget:
            out["torch_error"] = "skipped: the %gs budget is spent" % budget
        else:
            try:
                fn, note = torch_callable(torch, spec)
                out["torch_s"] = timer(fn)
                if note:
                    out["torch_op"] += ", " + note
                if out["ours_s"]:
                    out["speed_vs_torch"] = out["torch_s"] / out["ours_s"]
            except Exception as e:  # out of memory, an unsupported shape
                out["torch_error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
            finally:
                fn = None
                torch.cuda.empty_cache()
        write(out_path, doc)
        vs = "%.2fx" % out["speed_vs_torch"] if out.get("speed_vs_torch") else "-"
        roof = "%.0f" % out["roof_pct"] if out.get("roof_pct") else "-"
        print("%-15s %-5s %-42s %10s %10s %7s %6s  %s" % (out["op"], out["type"], out["shape"], fmt_s(out["ours_s"]),
                                                         fmt_s(out.get("torch_s")), vs, roof,
                                                         out.get("torch_error") or out["torch_op"]))
    print(summary_line(doc))
    return 0


def summary_line(doc):
    """One line of each timed point's ratios: "summary: OP TYPE SHAPE
    0.81x torch 72% roof; ..."."""
    parts = []
    for r in doc["records"]:
        bits = []
        if r.get("speed_vs_torch"):
            bits.append("%.2fx torch" % r["speed_vs_torch"])
        if r.get("roof_pct"):
            bits.append("%.0f%% roof" % r["roof_pct"])
        if bits:
            parts.append("%s %s %s %s" % (r["op"], r["type"], r["shape"], " ".join(bits)))
    return "summary: " + ("; ".join(parts) if parts else "no point timed by both")


def self_test():
    cases = [
        ({"op": "MUL_MAT", "type": "f16", "dims": {"m": 4096, "n": 512, "k": 4096}},
         {"kind": "matmul", "dtype": "f16", "a": [1, 512, 4096], "b": [1, 4096, 4096]}),
        ({"op": "MUL_MAT", "type": "f32", "dims": {"m": 11008, "n": 1, "k": 4096}},
         {"kind": "matmul", "dtype": "f32", "a": [1, 1, 4096], "b": [1, 4096, 11008]}),
        ({"op": "MUL_MAT", "type": "q4_0", "dims": {"m": 4096, "n": 1, "k": 11008}},
         {"kind": "matmul", "dtype": "f16", "a": [1, 1, 11008], "b": [1, 11008, 4096]}),
        ({"op": "FLASH_ATTN_EXT", "type": "f16", "dims": {"d": 128, "heads": 32, "kv_heads": 8, "n": 512, "kv": 4096}},
         {"kind": "sdpa", "dtype": "f16", "q": [1, 32, 512, 128], "kv": [1, 8, 4096, 128]}),
        ({"op": "SOFT_MAX", "type": "f32", "dims": {"kv": 512, "n": 512, "heads": 32}},
         {"kind": "softmax", "x": [32, 512, 512]}),
        ({"op": "RMS_NORM", "type": "f32", "dims": {"k": 4096, "n": 512}},
         {"kind": "rms_norm", "x": [512, 4096]}),
        ({"op": "ROPE", "type": "f32", "dims": {"d": 128, "heads": 32, "n": 1}}, {"kind": None}),
        ({"op": "MUL_MAT", "type": "q4_0", "dims": {"m": 4096}}, {"kind": None}),
    ]
    bad = 0
    for rec, want in cases:
        got = spec_of(rec)
        for k, v in want.items():
            if got.get(k) != v:
                print("self-test: %s %s %s: %s = %r, want %r" % (rec["op"], rec["type"], rec["dims"], k, got.get(k), v))
                bad += 1
        if not got.get("note"):
            print("self-test: %s: no note" % rec)
            bad += 1
    for rec, want in [({"median_s": 1e-3}, 1e-3), ({"median_s": 0}, None), ({}, None), ({"median_s": float("nan")}, None)]:
        if ours_seconds(rec) != want:
            print("self-test: ours_seconds(%r) = %r, want %r" % (rec, ours_seconds(rec), want))
            bad += 1
    line = summary_line({"records": [
        {"op": "MUL_MAT", "type": "q4_0", "shape": "m=4096,n=1,k=4096", "speed_vs_torch": 1.25, "roof_pct": 81.4},
        {"op": "ROPE", "type": "f32", "shape": "d=128"}]})
    if line != "summary: MUL_MAT q4_0 m=4096,n=1,k=4096 1.25x torch 81% roof":
        print("self-test: summary_line: %r" % line)
        bad += 1
    if fmt_s(2.5e-4) != "250 us" or fmt_s(None) != "-":
        print("self-test: fmt_s: %r %r" % (fmt_s(2.5e-4), fmt_s(None)))
        bad += 1
    bad += self_test_run([rec for rec, _ in cases])
    print("self-test: %s" % ("ok" if bad == 0 else "%d failures" % bad))
    return 1 if bad else 0


def fake_torch():
    """A stand-in for the parts of torch run() calls: tensors that hold
    nothing, events 1 ms apart."""
    import types

    class T:
        def __init__(self, *shape):
            self.shape = shape

        def __getattr__(self, name):  # fill_, copy_, pow, mean, repeat_interleave
            return lambda *a, **k: self

        def __getitem__(self, i):
            return self

        __mul__ = __add__ = __radd__ = __rmul__ = lambda self, o: self

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return 1.0

    torch = types.ModuleType("torch")
    torch.__version__ = "0.0-fake"
    torch.float16, torch.bfloat16, torch.float32 = "f16", "bf16", "f32"
    torch.cuda = types.SimpleNamespace(is_available=lambda: True, get_device_name=lambda i: "Fake GPU",
                                       synchronize=lambda: None, empty_cache=lambda: None, Event=Event)
    ns = types.SimpleNamespace
    torch.backends = ns(cuda=ns(matmul=ns(allow_tf32=True)), cudnn=ns(allow_tf32=True))
    torch.randn = torch.empty = lambda *a, **k: T(a)
    torch.empty_like = torch.rsqrt = lambda x: x
    torch.matmul = lambda a, b, out=None: out
    torch.softmax = lambda x, dim=-1: x
    torch.nn = ns(functional=ns(scaled_dot_product_attention=lambda q, k, v, **kw: q))
    return torch


def self_test_run(recs):
    """Runs run() on recs (each timed at 1 ms) with fake_torch in place
    of torch; returns the failures."""
    import tempfile
    bad = 0
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake_torch()
    try:
        with tempfile.TemporaryDirectory() as d:
            sweep, out = os.path.join(d, "sweep.json"), os.path.join(d, "torch.json")
            with open(sweep, "w") as f:
                json.dump({"records": [dict(r, median_s=1e-3, bytes=1e6, shape="s") for r in recs]}, f)
            with open(os.devnull, "w") as null:
                stdout, sys.stdout = sys.stdout, null
                try:
                    rc = run(sweep, out, 60)
                finally:
                    sys.stdout = stdout
            with open(out) as f:
                doc = json.load(f)
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    # The fake events are 1 ms apart, so the timer runs 20 iterations in
    # a sample (its 20 ms target): 50 us each, for the copy of 1 GiB read
    # and 1 GiB written as for every op.
    if rc != 0 or doc["device"] != "Fake GPU" or not doc["copy_gbps"] or abs(doc["copy_gbps"] - 2**31 / 50e-6 / 1e9) > 1:
        print("self-test: run: exit %d, device %r, copy %r GB/s" % (rc, doc["device"], doc["copy_gbps"]))
        bad += 1
    for rec, out in zip(recs, doc["records"]):
        timed = spec_of(rec)["kind"] is not None
        if timed and abs(out["speed_vs_torch"] - 0.05) > 1e-9:
            print("self-test: run: %s: speed_vs_torch %r, want 0.05" % (rec["op"], out["speed_vs_torch"]))
            bad += 1
        if timed != ("torch_s" in out) or timed != ("speed_vs_torch" in out) or "torch_error" in out or "roof_pct" not in out:
            print("self-test: run: record %s %s: %r" % (rec["op"], rec["dims"], out))
            bad += 1
    return bad


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    args, budget = [], 120.0
    it = iter(argv[1:])
    for a in it:
        if a == "--budget":
            try:
                budget = float(next(it))
            except (StopIteration, ValueError):
                print("torch_baseline: --budget wants seconds", file=sys.stderr)
                return 2
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    return run(args[0], args[1], budget)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

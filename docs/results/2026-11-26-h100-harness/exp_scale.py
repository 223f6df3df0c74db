# Where does the harness's d128 forward lose to tile-run's? Input scale (the
# harness draws N(0,1), tile-run N(0,0.25)), grad mode, or the call path.
import sys, torch
sys.path.insert(0, "benchmarks")
import attention_bench as b

def timed(name, shape, causal, scale, grad):
    sets = b.make_sets(2, shape, torch.float16, seed=shape[1])
    sets = [tuple((t.detach() * scale).requires_grad_(grad) for t in s[:3]) for s in sets]
    attend = b.implementation(name)
    if grad:
        ms = b.median_ms(lambda i: attend(*sets[i], causal), 2, 100)
    else:
        with torch.no_grad():
            ms = b.median_ms(lambda i: attend(*sets[i], causal), 2, 100)
    return b.attention_flops(shape[0], shape[2], shape[1], shape[3], causal) / ms / 1e9

for causal in (False, True):
    for n in (4096, 16384):
        shape = (16384 // n, n, 16, 128)
        for name in ("tile", "sdpa-flash"):
            cells = [f"{timed(name, shape, causal, s, g):6.1f}" for s in (1.0, 0.5) for g in (True, False)]
            print(f"d128 fwd {'causal' if causal else 'full  '} N={n:5d} {name:10s} "
                  f"scale1 grad/nograd {cells[0]} {cells[1]}  scale0.5 {cells[2]} {cells[3]}", flush=True)

# tile-run against the Python path on one machine, d128 forward.
import subprocess, sys, torch
sys.path.insert(0, "benchmarks")
import attention_bench as b
from tile.attention import functional as f

for causal in (False, True):
    for n in (4096, 16384):
        shape = (16384 // n, n, 16, 128)
        spec = f.kernel_bundle().select("attn_fwd", "fp16", 128, causal, seq_len=n)
        runs = []
        for layout in ("bnhd", "bhnd"):
            out = subprocess.run(["./bin/tile-run", "attention", "--mode", "fwd", "--backend", "cuda",
                                  "--layout", layout, "--bench", "--warmup", "3", "--reps", "20",
                                  "--head-dim", "128", "--heads", "16", "--batch", str(16384 // n),
                                  "--seq", str(n)] + (["--causal"] if causal else []),
                                 capture_output=True, text=True).stdout
            runs += [l.split()[4] for l in out.splitlines() if l.startswith("bench fwd:")]
        flops = b.attention_flops(shape[0], shape[2], shape[1], shape[3], causal)
        cells = []
        for count in (1, 2):
            sets = b.make_sets(count, shape, torch.float16, seed=n)
            with torch.no_grad():
                ms = b.median_ms(lambda i: f._forward(*sets[i][:3], causal, 128 ** -0.5), count, 100)
            cells.append(f"{flops / ms / 1e9:6.1f}")
        print(f"{'causal' if causal else 'full  '} N={n:5d} {spec.name}: tile-run bnhd/bhnd "
              f"{' '.join(runs)}  python _forward 1 set / 2 sets {' '.join(cells)}", flush=True)

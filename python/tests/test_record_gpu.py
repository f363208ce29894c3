"""Record mode end to end on a GPU (run on the GPU machine; not in CTest):

    PYTHONPATH=python python3 python/tests/test_record_gpu.py   # KERNTUNE_LIB, KERNTUNE_CLI

A PyTorch "model" (a projection GEMM and causal GQA attention on shapes no suite holds) runs in a
child process through kerntune.Runtime(record=MANIFEST) on an empty database: every problem is
served by the model's pick and appended to the manifest. `kerntune fleet run` then tunes that
manifest (measured on this GPU), and the same child run again is served only by exact entries,
appends nothing, and matches a float32 PyTorch reference both times. Fresh random data, seed
printed. Exits 1 when a check fails, 77 when it cannot run here (no CUDA)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

GEMM_SHAPE = (777, 3072, 768)  # M, N, K
ATTN_SHAPE = dict(batch=2, heads_q=16, heads_kv=4, seqlen=1536, head_dim=128)


def model_run(database, manifest, seed):
    """The child: one GEMM and one attention call, checked; prints the runtime's stats as JSON."""
    import torch
    import kerntune

    torch.manual_seed(seed)
    rt = kerntune.Runtime(database=database, record=manifest)
    m, n, k = GEMM_SHAPE
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = rt.gemm(a, w)
    ref = a.float() @ w.float().T
    gemm_err = ((c.float() - ref).abs().max() / ref.abs().max()).item()

    s = ATTN_SHAPE
    q = torch.randn(s["batch"], s["heads_q"], s["seqlen"], s["head_dim"], device="cuda",
                    dtype=torch.bfloat16)
    kv_shape = (s["batch"], s["heads_kv"], s["seqlen"], s["head_dim"])
    key = torch.randn(kv_shape, device="cuda", dtype=torch.bfloat16)
    val = torch.randn(kv_shape, device="cuda", dtype=torch.bfloat16)
    o = rt.attention(q, key, val, causal=True)
    group = s["heads_q"] // s["heads_kv"]
    ref_o = torch.nn.functional.scaled_dot_product_attention(
        q.float(), key.float().repeat_interleave(group, 1), val.float().repeat_interleave(group, 1),
        is_causal=True)
    attn_err = (o.float() - ref_o).abs().max().item()
    torch.cuda.synchronize()
    print(json.dumps({"stats": rt.stats(), "gemm_rel_err": gemm_err, "attn_abs_err": attn_err}))


def cli():
    """The kerntune CLI: $KERNTUNE_CLI, else dist/bin or build/src/tools of this checkout."""
    if os.environ.get("KERNTUNE_CLI"):
        return os.environ["KERNTUNE_CLI"]
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    for path in ("dist/bin/kerntune", "build/src/tools/kerntune"):
        if os.path.exists(os.path.join(root, path)):
            return os.path.join(root, path)
    raise SystemExit("test_record_gpu: no kerntune CLI (set KERNTUNE_CLI)")


def run_child(database, manifest, seed):
    out = subprocess.run([sys.executable, __file__, "--child", database, manifest, str(seed)],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(
                             os.path.dirname(__file__), "..")))
    if out.returncode != 0:
        raise SystemExit(f"the model run failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def problem_lines(manifest):
    with open(manifest) as f:
        return [line for line in f.read().splitlines()
                if line.startswith(("gemm ", "attention ", "key "))]


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        model_run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    try:
        import torch
    except ImportError as e:
        print(f"test_record_gpu: skipped: PyTorch cannot be imported ({e})")
        return 77
    if not torch.cuda.is_available():
        print("test_record_gpu: skipped: no CUDA device")
        return 77
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"test_record_gpu: seed {seed}")
    failures = []

    def expect(ok, what):
        print(("ok      " if ok else "FAILED  ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        database = os.path.join(tmp, "served.db")
        manifest = os.path.join(tmp, "recorded.manifest")
        first = run_child(database, manifest, seed)
        lines = problem_lines(manifest)
        print(f"first run: {first}\nrecorded: {lines}")
        expect(len(lines) == 2, "the first run recorded its two problems")
        expect(first["stats"]["kernels_by_grade"].get("exact", 0) == 0,
               "nothing was exact before tuning")
        expect(first["gemm_rel_err"] < 2e-2 and first["attn_abs_err"] < 2e-2,
               "the first run's outputs match float32 PyTorch")

        # A small search keeps the test short; the manifest's last `tune` line counts.
        with open(manifest, "a") as f:
            f.write("tune candidates=16 finalists=2\n")
        tuned = subprocess.run([cli(), "fleet", "run", "--manifest", manifest, "--db", database],
                               capture_output=True, text=True)
        print(tuned.stderr[-2000:])
        expect(tuned.returncode == 0, "fleet run tuned the recorded manifest")

        second = run_child(database, manifest, seed + 1)
        print(f"second run: {second}")
        grades = second["stats"]["kernels_by_grade"]
        expect(grades.get("exact", 0) >= 2 and sum(grades.values()) == grades.get("exact", 0),
               "the second run was served by exact entries only")
        expect(problem_lines(manifest) == lines, "the second run recorded nothing new")
        expect(second["gemm_rel_err"] < 2e-2 and second["attn_abs_err"] < 2e-2,
               "the second run's outputs match float32 PyTorch")
    print(f"test_record_gpu: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

// The request loops of `kerntune-worker`: the compile worker turns generated sources into cubins
// with NVRTC; the benchmark worker owns one GPU's context, the problem's inputs and reference,
// and verifies and times candidates. Both answer one request at a time on `fd` until the tuner
// closes it. A crash here kills only the worker: that is the point. Before either loop the
// worker sends {ready: compile|bench} (src/worker/main.cpp), which the tuner waits for.
#pragma once

namespace kt::tune {

// Requests: {source.*} → {status: ok, cubin.*} | {status: compile_error, detail} |
// {status: unavailable, detail} (no NVRTC: not the candidate's fault). A source carrying the
// compile_crash test fault raises SIGSEGV instead. Returns the process exit status.
int serve_compile(int fd);

// Requests: {op: setup, problem, device, seed, workspace_bytes, db, bench options} →
// {status: ok} | {status: error, detail}; {op: measure, config, cubin.*} → {status, detail,
// timing fields, exiting}; {op: remeasure, count, rounds, config.i, cubin.i.*, timing i.*} →
// {status: ok, timing i.*} | {status: error, detail, exiting}. After a reply with exiting = 1
// (the context is broken) the worker exits with status 3.
int serve_bench(int fd);

}  // namespace kt::tune

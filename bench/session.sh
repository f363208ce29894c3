# Sourced by the bench scripts: checks the install in dist/, puts it first on PATH, points
# KERNTUNE_DB at a fresh database in the results folder ($out), finds cuBLASLt, and records the
# date, commit, device, driver and clocks in $out/session.txt.
mkdir -p "$out"
[ -x dist/bin/kerntune ] || { echo "no dist/bin/kerntune: cmake --install build --prefix dist" >&2; exit 1; }
export PATH="$PWD/dist/bin:$PATH"
export KERNTUNE_DB="$out/kerntune.db"
rm -f "$out"/kerntune.db "$out"/kerntune.db-wal "$out"/kerntune.db-shm
if [ -z "${KERNTUNE_CUBLASLT:-}" ] && [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  lt=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lt" ] && export KERNTUNE_CUBLASLT="$lt"
fi
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(cat dist/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv || true
  kerntune info || true
} >"$out/session.txt" 2>&1
# The database holds cubins (tens of MB): drop it when the script ends; the CSVs keep the results.
trap 'rm -f "$out"/kerntune.db "$out"/kerntune.db-wal "$out"/kerntune.db-shm' EXIT

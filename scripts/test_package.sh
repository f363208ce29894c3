#!/usr/bin/env bash
# The package test: `test_package.sh [BUILD_DIR]` (default build) installs that build into a
# scratch prefix, checks that the installed binaries carry no dependency the GPU machine lacks,
# runs the installed CLI, then configures, builds and runs tests/package (find_package(kerntune)
# from C++ and C) against the prefix. Needs no GPU. CTest runs it as package.find_package_consumer.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$(cd "${1:-$repo/build}" && pwd)
cmake=${KT_CMAKE:-cmake}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/kerntune-package.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix

step() { echo "== test_package: $*"; }
fail() { echo "test_package: FAILED: $*" >&2; exit 1; }

step "build and install $build_dir into $prefix"
"$cmake" --build "$build_dir" --target kerntune_runtime kerntune
"$cmake" --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libkerntune.so -print -quit)")
[[ -f $libdir/libkerntune.so ]] || fail "no libkerntune.so under $prefix"
for file in bin/kerntune include/kerntune/kerntune.h include/kerntune/kerntune.hpp \
            include/kerntune/core/error.hpp include/kerntune/core/gemm_problem.hpp \
            include/kerntune/core/types.hpp; do
  [[ -e $prefix/$file ]] || fail "$file was not installed"
done

step "libkerntune.so has a versioned SONAME: the file, its SONAME link, the development link"
soname=$(readelf -d "$libdir/libkerntune.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
read -r ffi_soname ffi_version < <(cd "$scratch" && PYTHONPATH="$prefix/lib/python" python3 -c \
  'from kerntune import _ffi; print(_ffi.SONAME, _ffi.LIBRARY_VERSION)')
echo "   SONAME $soname, file libkerntune.so.$ffi_version"
[[ $soname == "$ffi_soname" ]] ||
  fail "the SONAME is '$soname' but python/kerntune/_ffi.py looks for '$ffi_soname'"
[[ -f $libdir/libkerntune.so.$ffi_version && ! -L $libdir/libkerntune.so.$ffi_version ]] ||
  fail "no file libkerntune.so.$ffi_version (python/kerntune/_ffi.py's LIBRARY_VERSION)"
[[ $(readlink "$libdir/$soname") == "libkerntune.so.$ffi_version" ]] ||
  fail "$soname does not link to libkerntune.so.$ffi_version"
[[ $(readlink "$libdir/libkerntune.so") == "$soname" ]] || fail "libkerntune.so does not link to $soname"

step "installed binaries need only the C/C++ runtime (the GPU machine has nothing else)"
for binary in "$prefix/bin/kerntune" "$libdir/libkerntune.so"; do
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "   $(basename "$binary"): $needed"
  for library in $needed; do
    case $library in
      libstdc++.so.* | libm.so.* | libgcc_s.so.* | libc.so.* | libdl.so.* | libpthread.so.* | \
        ld-linux*) ;;
      *) fail "$(basename "$binary") needs $library, which the GPU machine does not have" ;;
    esac
  done
done
# Read once: `nm | grep -q` under pipefail fails whenever grep exits before nm has written its
# ~140 KB (SIGPIPE), which made this check flaky.
exports=$(nm -D --defined-only "$libdir/libkerntune.so")
if grep -q ' sqlite3_' <<<"$exports"; then
  fail "libkerntune.so exports SQLite symbols (they must stay private)"
fi
for symbol in kt_version kt_runtime_open kt_runtime_open_device kt_runtime_close kt_gemm kt_last_error; do
  grep -q " T $symbol\$" <<<"$exports" || fail "libkerntune.so does not export $symbol"
done

step "libkerntune.so exports the C ABI and the public C++ API only (cmake/libkerntune.map)"
# Demangled, without addresses and types; read once, as above.
api=$(nm -DC --defined-only "$libdir/libkerntune.so" | sed 's/^[0-9a-f]* [A-Za-z] //')
foreign=$(grep -Ev '^(kt_[a-z_]+|kt::.*|(typeinfo|typeinfo name|vtable) for kt::[A-Za-z]+)$' \
  <<<"$api" || true)
[[ -z $foreign ]] || fail "libkerntune.so exports symbols outside its API: $(head -3 <<<"$foreign")"
internal=$(grep -E 'fmt::|spdlog::|sqlite|kt::(cache|rt|tune|gen|env|cli)::|kt::Runtime::Impl::' \
  <<<"$api" | grep -v '^kt::Runtime::Runtime(' || true)
[[ -z $internal ]] || fail "libkerntune.so exports internals: $(head -3 <<<"$internal")"
echo "   $(wc -l <<<"$api") symbols"

step "the installed CLI runs"
"$prefix/bin/kerntune" --help >/dev/null
"$prefix/bin/kerntune" explain --shape 4100x4096x4096 --db "$scratch/explain.db"

step "the installed CLI renders a report with the installed Python package"
mpl_python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import matplotlib' 2>/dev/null; then mpl_python=$candidate; break; fi
done
if [[ -n $mpl_python ]]; then
  "$prefix/bin/kerntune" cache import --db "$scratch/report.db" \
    "$repo/tests/report/predicted_tuning.csv" >/dev/null 2>&1
  KERNTUNE_PYTHON=$mpl_python "$prefix/bin/kerntune" report --db "$scratch/report.db" \
    --out "$scratch/report.html"
  renderer="kerntune.report $(realpath "$prefix")/lib/python/kerntune/report.py"
  grep -q "content='$renderer'" "$scratch/report.html" ||
    fail "the installed CLI's report was not rendered by $renderer"
else
  echo "   skipped: no python3 here imports matplotlib (apt-get install python3-matplotlib)"
fi

step "pkg-config builds the C consumer against the prefix"
pkg_flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs kerntune) ||
  fail "pkg-config does not find kerntune.pc under $libdir/pkgconfig"
# shellcheck disable=SC2086  # the flags are words
cc -std=c11 "$repo/tests/package/main.c" $pkg_flags -o "$scratch/pkg_consumer_c"
"$scratch/pkg_consumer_c" | grep -q "^kerntune .* (C ABI)$" || fail "the pkg-config build did not run"
needed=$(readelf -d "$scratch/pkg_consumer_c" | sed -n 's/.*(NEEDED).*\[\(libkerntune[^]]*\)\]/\1/p')
[[ $needed == "$soname" ]] || fail "the C consumer needs '$needed', not the SONAME $soname"

step "the Python package installed beside the library imports and loads it"
py_version=$(cd "$scratch" && env -u KERNTUNE_LIB PYTHONPATH="$prefix/lib/python" python3 -c \
  'import kerntune; print(kerntune.version(), kerntune.library()._name)')
echo "   $py_version"
[[ $py_version == *" $libdir/libkerntune.so" ]] || fail "the installed package loaded another library"
[[ $py_version == "$ffi_version "* ]] ||
  fail "python/kerntune/_ffi.py's LIBRARY_VERSION is $ffi_version, the library's ${py_version%% *}"

step "pip builds a wheel that bundles the library, and it installs and loads offline"
python3 -m pip --version >/dev/null || fail "python3 has no pip (apt-get install python3-pip)"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
KERNTUNE_LIB=$libdir/libkerntune.so python3 -m pip wheel --no-deps --no-index -q \
  "$repo/python" -w "$scratch/wheels"
python3 -m pip install --no-deps --no-index -q --target "$scratch/site" "$scratch"/wheels/*.whl
wheel_version=$(cd "$scratch" && env -u KERNTUNE_LIB PYTHONPATH="$scratch/site" python3 -c '
import importlib.metadata, kerntune
print(importlib.metadata.version("kerntune"), kerntune.version(), kerntune.library()._name)')
echo "   $wheel_version"
read -r metadata_version library_version loaded <<<"$wheel_version"
[[ $metadata_version == "$library_version" ]] ||
  fail "python/pyproject.toml says $metadata_version, the library $library_version"
[[ $loaded == "$scratch/site/kerntune/lib/libkerntune.so" ]] ||
  fail "the wheel's package did not load its bundled library"

step "configure, build and run tests/package against the prefix"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
"$cmake" -S "$repo/tests/package" -B "$scratch/consumer" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$scratch/consumer"
# Isolated from the user's database: the runtime opens read-only and the default path is here.
export HOME=$scratch XDG_CACHE_HOME=$scratch/cache
unset KERNTUNE_DB
cpp_out=$("$scratch/consumer/kt_consumer_cpp")
echo "$cpp_out"
c_out=$("$scratch/consumer/kt_consumer_c")
echo "$c_out"
version=$(sed -n 's/^kerntune \([0-9][0-9.]*\)$/\1/p' <<<"$cpp_out")
[[ -n $version ]] || fail "kt_consumer_cpp printed no version"
grep -q "^problem gemm:bf16:bf16:nt:4096x4096x4096 " <<<"$cpp_out" || fail "wrong problem key"
grep -q "^problem attnbwd:bf16:b2.hq16.hkv4.sq1024.sk1024.d128.causal.det " <<<"$cpp_out" ||
  fail "wrong attention backward problem key"

if command -v python3 >/dev/null; then
  step "ctypes loads libkerntune.so"
  python3 - "$libdir/libkerntune.so" "$version" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.kt_version.restype = ctypes.c_char_p
version = lib.kt_version().decode()
print(f"   ctypes: kt_version() = {version}")
sys.exit(0 if version == sys.argv[2] else 1)
PY
fi
step "the installed package finds the library by its SONAME, and as the file alone"
# A runtime-only install has no development link; a copy that dropped symlinks, the file alone.
# (Last: the consumers above need the links.)
rm "$libdir/libkerntune.so"
for expected in "$libdir/$soname" "$libdir/libkerntune.so.$ffi_version"; do
  loaded=$(cd "$scratch" && env -u KERNTUNE_LIB PYTHONPATH="$prefix/lib/python" python3 -c \
    'import kerntune; kerntune.version(); print(kerntune.library()._name)')
  echo "   $loaded"
  [[ $loaded == "$expected" ]] || fail "the installed package loaded $loaded, not $expected"
  rm -f "$libdir/$soname"
done

step "passed (kerntune $version)"

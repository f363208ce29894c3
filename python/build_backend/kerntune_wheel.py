"""A PEP 517 build backend for the kerntune package that needs nothing beyond the standard library,
so `pip install ./python` works offline: the wheel is the kerntune/ sources, plus
kerntune/lib/libkerntune.so when KERNTUNE_LIB names one at build time (then the wheel is tagged
for this platform), plus the dist-info pyproject.toml describes."""
import base64
import hashlib
import os
import re
import sysconfig
import zipfile
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent  # python/


def _project():
    """The [project] table's string fields (tomllib where Python has it, 3.11+; else the
    `key = "value"` lines, which is all pyproject.toml holds there)."""
    text = (_ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
        project = tomllib.loads(text)["project"]
        project["license"] = project["license"]["text"]
        return project
    except ImportError:
        table = text.split("[project]", 1)[1]
        fields = dict(re.findall(r'^(\w[\w-]*) = "([^"]*)"', table, re.M))
        fields["license"] = re.search(r'license = \{ text = "([^"]*)" \}', table).group(1)
        return fields


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name, version = project["name"], project["version"]
    files = {f"kerntune/{p.name}": p.read_bytes()
             for p in sorted((_ROOT / "kerntune").glob("*.py"))}
    bundled = os.environ.get("KERNTUNE_LIB")
    if bundled:
        files["kerntune/lib/libkerntune.so"] = Path(bundled).read_bytes()
    tag = "py3-none-" + (sysconfig.get_platform().replace("-", "_").replace(".", "_")
                         if bundled else "any")
    info = f"{name}-{version}.dist-info"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Summary: {project['description']}\nRequires-Python: {project['requires-python']}\n"
        f"License: {project['license']}\n").encode()
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: kerntune_wheel\nRoot-Is-Purelib: {str(not bundled).lower()}\n"
        f"Tag: {tag}\n").encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            info_entry = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            info_entry.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            z.writestr(info_entry, d, zipfile.ZIP_DEFLATED)
    return wheel

"""Translation units of the native tier compiled once per machine into object files that
libraries link in: c_sgemm's matrix-product kernel, c_conv's convolutions, c_windows'
pooling kernels.

Why: compiled with every program that uses it, such a unit cost each of those programs' first
calls its compile time (c_sgemm's 160 ms); linked from an object file, it costs nothing after
the machine's first. The object is kept in the private cache with a tagged record of its
SHA-256 (as native libraries are, aot_trust), keyed by the unit's source, the compiler and its
flags; its bytes are checked against the record when read (c_tier copies them into the build's
private directory before the linker reads them). Without a cache the object is built for the
process (once) all the same.
"""
import hashlib
import os
import subprocess
import tempfile
import threading

from . import aot_trust

_lock = threading.Lock()
_objects = {}  # build key -> the object's bytes (None: it does not compile here)


def _names(stem, source, cc, flags):
    """(build key, object file name, record name) of `source` built by `cc` with `flags`."""
    key = hashlib.sha256("\0".join([source, *cc, *flags]).encode()).hexdigest()[:16]
    return key, f"omnistage_{stem}_{key}.o", f"omnistage_{stem}_{key}.json"


def _linkable(flags):
    return [f for f in flags if f != "-shared"]


def object_bytes(stem, source, cc, flags):
    """`source` compiled by `cc` with `flags` (the native tier's, less linking) as object code,
    named after `stem`: from the cache when its record vouches for its bytes, else compiled now
    (once per machine and flags) and published. None when it does not compile."""
    flags = _linkable(flags)
    key, name, record_name = _names(stem, source, cc, flags)
    with _lock:
        if key not in _objects:
            _objects[key] = _cached(name, record_name) or _compile(stem, source, cc, flags, name, record_name)
        return _objects[key]


def pending(stem, source, cc, flags):
    """Whether object_bytes would compile `source` now (neither this process nor the cache has
    its object, and no attempt has failed here)."""
    key, name, record_name = _names(stem, source, cc, _linkable(flags))
    with _lock:
        if key not in _objects:
            data = _cached(name, record_name)
            if data is None:
                return True
            _objects[key] = data
        return False


def _cached(name, record_name):
    record = aot_trust.read_record(record_name)
    if record is None or record.get("object") != name:
        return None
    return aot_trust.object_bytes(record, record_name)  # (evicted or changed: compiled again)


def _compile(stem, source, cc, flags, name, record_name):
    with tempfile.TemporaryDirectory(prefix=f"omnistage-{stem}-") as work:
        with open(os.path.join(work, f"{stem}.c"), "w", encoding="utf-8") as f:
            f.write(source)
        done = subprocess.run([*cc, *flags, "-fvisibility=hidden", "-c", "-o", f"{stem}.o", f"{stem}.c"], cwd=work,
                              capture_output=True, text=True)
        if done.returncode != 0:
            return None
        with open(os.path.join(work, f"{stem}.o"), "rb") as f:
            data = f.read()
    aot_trust.publish(name, data, record_name, field="object")
    return data


def for_types(template, types):
    """`template` once per (C type, suffix, macros) of `types`: `T` is the type and each macro's
    name its value (C #defines around that copy), `SUF` in names the suffix."""
    parts = []
    for ct, suf, macros in types:
        defined = {"T": ct, **macros}
        parts.append("".join(f"#define {k} {v}\n" for k, v in defined.items()) + template.replace("SUF", suf)
                     + "".join(f"#undef {k}\n" for k in defined))
    return "\n".join(parts)

#!/usr/bin/env python3
"""Writes the sites file of libtrellis_avx2_cpuid.so (TRELLIS_AVX2_CPUID_SITES): for each shared
object or program given, its real path and the addresses of its CPUID instructions, as
`objdump -d` (GNU binutils) disassembles them. The library rewrites exactly those instructions on a
machine without CPUID faulting (see avx2_cpuid.cpp).

  cpuid_sites.py --out sites.txt OBJECT... [--cache-dir DIR]

A byte search for CPUID's encoding (0F A2) would also hit those bytes inside other instructions and
operands (74 such pairs in ONNX Runtime 1.30's library, 53 of them CPUIDs); a disassembler's
instruction boundaries are what make the rewrite safe, and the library still checks each address
holds 0F A2 before it writes. Disassembling a large library takes seconds (ONNX Runtime ~4 s,
oneDNN ~6 s), so each object's list is cached under --cache-dir by path, size and modification time.
"""
import argparse
import hashlib
import os
import re
import subprocess
import sys

_CPUID = re.compile(r"^\s*([0-9a-f]+):\s+cpuid\s*$")


def cpuid_addresses(path):
    """The addresses (link-time, as objdump prints them) of the CPUID instructions of one object."""
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True, capture_output=True,
                             text=True).stdout
    except FileNotFoundError:
        sys.exit("error: objdump (GNU binutils) is not installed; it finds the CPUID instructions of %s" % path)
    except subprocess.CalledProcessError as e:
        sys.exit("error: objdump could not disassemble %s: %s" % (path, e.stderr.strip()))
    return [m.group(1) for m in map(_CPUID.match, out.splitlines()) if m]


def object_line(path, cache_dir=None):
    """'<real path> <hex>...' for one object, from the cache when the object is unchanged."""
    real = os.path.realpath(path)
    st = os.stat(real)
    key = hashlib.sha1(("%s %d %d" % (real, st.st_size, st.st_mtime_ns)).encode()).hexdigest()
    cached = os.path.join(cache_dir, key + ".txt") if cache_dir else None
    if cached and os.path.exists(cached):
        with open(cached) as f:
            return f.read().strip()
    line = " ".join([real] + cpuid_addresses(real))
    if cached:
        os.makedirs(cache_dir, exist_ok=True)
        with open(cached + ".tmp", "w") as f:
            f.write(line + "\n")
        os.replace(cached + ".tmp", cached)
    return line


def write_sites(out, objects, cache_dir=None):
    """Writes the sites file for `objects`; returns the number of CPUID instructions listed."""
    lines = [object_line(p, cache_dir) for p in objects]
    with open(out, "w") as f:
        f.write("# written by tools/avx2_cpuid/cpuid_sites.py: <real path> <CPUID addresses (hex)>\n")
        for line in lines:
            f.write(line + "\n")
    return sum(len(line.split()) - 1 for line in lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("objects", nargs="+", help="shared objects or programs whose CPUIDs are to be rewritten")
    ap.add_argument("--out", required=True, help="the sites file to write")
    ap.add_argument("--cache-dir", default=None, help="where per-object lists are kept between runs")
    args = ap.parse_args()
    for p in args.objects:
        if not os.path.isfile(p):
            sys.exit("error: %s: no such file" % p)
    n = write_sites(args.out, args.objects, args.cache_dir)
    print("%s: %d CPUID instructions in %d objects" % (args.out, n, len(args.objects)))


if __name__ == "__main__":
    main()

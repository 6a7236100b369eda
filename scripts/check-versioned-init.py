#!/usr/bin/env python3
# scripts/check-versioned-init.py — the versioned-struct check (room: build
# tooling; the layers/versioned_init test runs it). Two halves keep "no
# versioned struct is initialised positionally" true (docs/abi.md):
#  1. every struct whose first member is `int version` (an options struct or a
#     vtable) in include/, src/, tests/, bench/, fuzz/ and examples/ is marked
#     ADCP_VERSIONED (adcp/core.h);
#  2. with ADCP_STRICT_INIT (what the project's build defines) the compiler
#     refuses a positional initialiser of each of them and accepts the
#     designated one, so the build itself (-Werror=designated-init) fails on
#     any positional initialiser. Exit 77 when the compiler has no
#     designated_init attribute (the test is then reported skipped).
#   check-versioned-init.py SOURCE_DIR CC
import os
import re
import subprocess
import sys
import tempfile

DIRS = ("include", "src", "tests", "bench", "fuzz", "examples")
STRUCT = re.compile(r"\bstruct\s+(ADCP_VERSIONED\s+)?(adcp_\w+|\w+)\s*\{")
COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def blank_comments(text):
    # Keeps offsets and line numbers: a comment becomes spaces (newlines kept).
    return COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def versioned_structs(src):
    """(path, line, name, marked) of every struct whose first member is int version."""
    found = []
    for d in DIRS:
        for root, _, files in os.walk(os.path.join(src, d)):
            for fn in sorted(files):
                if not fn.endswith((".h", ".c")):
                    continue
                path = os.path.join(root, fn)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = blank_comments(f.read())
                for m in STRUCT.finditer(text):
                    if re.match(r"\s*int\s+version\s*;", text[m.end() :]):
                        line = text.count("\n", 0, m.start()) + 1
                        found.append((os.path.relpath(path, src), line, m.group(2), bool(m.group(1))))
    return found


def probe(src, cc, structs, tmp):
    """Compiles a positional and a designated initialiser of each struct; the names the compiler did not refuse."""
    headers = sorted({p for p, _, _, _ in structs if p.endswith(".h")})
    incs = []
    for p in headers:
        incs.append('#include "%s"' % (p[len("include/") :] if p.startswith("include/") else p[len("src/") :]))
    body = "\n".join(incs) + "\n"
    lines = {}
    for i, (_, _, name, _) in enumerate(structs):
        body += "struct %s adcp_probe_p%d = {1};\n" % (name, i)
        lines[body.count("\n")] = name
        body += "struct %s adcp_probe_d%d = {.version = 1};\n" % (name, i)
    c = os.path.join(tmp, "probe.c")
    with open(c, "w") as f:
        f.write(body)
    cmd = [cc, "-std=c17", "-DADCP_STRICT_INIT", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-Wdesignated-init",
           "-I", os.path.join(src, "include"), "-I", os.path.join(src, "src"), "-c", c, "-o", os.path.join(tmp, "p.o")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("versioned-init: the probe does not compile:\n" + out.stderr)
    warned = set()
    for m in re.finditer(r"probe\.c:(\d+):\d+: warning: positional initiali[sz]ation", out.stderr):
        warned.add(int(m.group(1)))
    designated = [n for n in re.findall(r"probe\.c:(\d+):\d+: warning", out.stderr) if int(n) not in lines]
    if designated:
        sys.exit("versioned-init: a designated initialiser drew a warning:\n" + out.stderr)
    return [name for line, name in lines.items() if line not in warned]


def has_attribute(cc, tmp):
    c = os.path.join(tmp, "attr.c")
    with open(c, "w") as f:
        f.write("#if !defined(__has_attribute) || !__has_attribute(designated_init)\n#error none\n#endif\n")
    return subprocess.run([cc, "-E", c], capture_output=True).returncode == 0


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-versioned-init.py SOURCE_DIR CC")
    src, cc = sys.argv[1], sys.argv[2]
    structs = versioned_structs(src)
    bad = [s for s in structs if not s[3]]
    for path, line, name, _ in bad:
        print("versioned-init: %s:%d: struct %s starts with int version but is not ADCP_VERSIONED" % (path, line, name),
              file=sys.stderr)
    if not structs:
        sys.exit("versioned-init: found no versioned struct under %s" % src)
    if bad:
        sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="adcp-versioned.") as tmp:
        if not has_attribute(cc, tmp):
            print("versioned-init: %s has no designated_init attribute; skipped" % cc)
            sys.exit(77)
        missed = probe(src, cc, structs, tmp)
    if missed:
        sys.exit("versioned-init: the compiler accepted a positional initialiser of: " + ", ".join(missed))
    print("versioned-init: ok (%d versioned structs, each refuses a positional initialiser)" % len(structs))


if __name__ == "__main__":
    main()

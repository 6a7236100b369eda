#!/usr/bin/env python3
# scripts/check-layers.py — the layering check (room: build tooling; the layers
# test runs it). Every call between rooms, read from the library's object files
# (nm: undefined symbols against the defining object), and every #include of a
# project header in src/ and include/adcp/, must go down scripts/rooms.txt.
# An upward edge fails naming caller, callee and both rooms, unless
# scripts/layers-allow.txt lists it; a listed edge that no longer exists fails
# too, so that list only shrinks.
#   check-layers.py [--rooms F] [--allow F] SOURCE_DIR OBJECT.o...
import os
import re
import subprocess
import sys


def die(msg):
    print("layers: " + msg, file=sys.stderr)
    sys.exit(2)


def read_rooms(path):
    rank, headers, objects = {}, {}, {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            level = len(set(rank.values()))
            for word in line:
                if word.startswith("header="):
                    headers[word[7:]] = last
                elif word.startswith("object="):
                    objects[word[7:]] = last
                elif re.fullmatch(r"[a-z][a-z0-9_]*", word):
                    if word in rank:
                        die(f"{path}:{no}: room {word} is listed twice")
                    rank[word] = level
                    headers[word + ".h"] = word
                    last = word
                else:
                    die(f"{path}:{no}: '{word}' is neither a room nor header=/object=")
    return rank, headers, objects


def read_allow(path):
    allow = {}
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            body, _, reason = raw.partition("#")
            words = body.split()
            if not words:
                continue
            if len(words) != 3 or words[0] not in ("call", "include"):
                die(f"{path}:{no}: expected 'call SOURCE SYMBOL' or 'include FILE HEADER'")
            if not reason.strip():
                die(f"{path}:{no}: an allowed edge needs its reason after '#'")
            allow[tuple(words)] = no
    return allow


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    rooms_file, allow_file = os.path.join(here, "rooms.txt"), os.path.join(here, "layers-allow.txt")
    while argv and argv[0].startswith("--"):
        if argv[0] == "--rooms" and len(argv) > 1:
            rooms_file, argv = argv[1], argv[2:]
        elif argv[0] == "--allow" and len(argv) > 1:
            allow_file, argv = argv[1], argv[2:]
        else:
            die("usage: check-layers.py [--rooms F] [--allow F] SOURCE_DIR OBJECT.o...")
    if len(argv) < 2:
        die("usage: check-layers.py [--rooms F] [--allow F] SOURCE_DIR OBJECT.o...")
    src, objs = argv[0], argv[1:]
    rank, headers, gen_objects = read_rooms(rooms_file)
    allow = read_allow(allow_file)

    def object_source(o):
        """src/ROOM/x.c of a CMake object file, or a generated source's name."""
        m = re.search(r"/src/([^/]+/[^/]+\.c)\.o$", o)
        if m:
            return "src/" + m.group(1)
        for g in gen_objects:
            if o.endswith("/" + g + ".o"):
                return g
        return None

    def room_of_source(s):
        if s in gen_objects:
            return gen_objects[s]
        return s.split("/")[1] if s.startswith("src/") else None

    edges = []  # (kind, where, what, from_room, to_room, detail)
    # Calls: undefined symbols of one object resolved against the others.
    defined, undefined, source_of = {}, {}, {}
    for o in objs:
        s = object_source(o)
        if s is None:
            die(f"object {o} is neither under src/ROOM/ nor an object= of rooms.txt")
        r = room_of_source(s)
        if r not in rank:
            die(f"{s}: room {r} is not in {rooms_file}")
        source_of[o] = s
        undefined[s] = set()
    # One nm for every object: "OBJECT: [ADDR] TYPE SYMBOL" per line.
    out = subprocess.run(["nm", "-A"] + objs, capture_output=True, text=True)
    if out.returncode:
        die(f"nm failed: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        m = re.match(r"^(.*?\.o):(.*)$", line)
        if not m or m.group(1) not in source_of:
            continue
        o, p = m.group(1), m.group(2).split()
        s = source_of[o]
        if len(p) == 2 and p[0] == "U":
            undefined[s].add(p[1])
        elif len(p) == 3 and p[1] in "TDBRGSVW":
            defined[p[2]] = s
    for s, syms in undefined.items():
        for sym in sorted(syms):
            d = defined.get(sym)
            if d is None:
                continue
            a, b = room_of_source(s), room_of_source(d)
            if a != b and rank[b] >= rank[a]:
                edges.append(("call", s, sym, a, b, f"{s} (room {a}) calls {sym}, defined in {d} (room {b})"))
    # Includes of project headers.
    for top in ("src", "include/adcp"):
        for dirpath, _, files in os.walk(os.path.join(src, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src)
                parts = rel.split("/")
                if top == "src":
                    a = parts[1] if len(parts) > 2 else None
                else:
                    a = headers.get(parts[2])
                    if a is None:
                        die(f"{rel}: header not owned by any room in {rooms_file}")
                if a is None or a not in rank:
                    die(f"{rel}: room {a} is not in {rooms_file}")
                with open(path, errors="replace") as f:
                    for no, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m:
                            continue
                        inc = m.group(1)
                        ip = inc.split("/")
                        if len(ip) == 2 and ip[0] == "adcp":
                            b = headers.get(ip[1])
                            if b is None:
                                die(f"{rel}:{no}: includes {inc}, owned by no room in {rooms_file}")
                        elif len(ip) == 2 and ip[0] in rank:
                            b = ip[0]
                        else:
                            continue  # same-folder or generated include
                        if a != b and rank[b] >= rank[a]:
                            edges.append(("include", rel, inc, a, b,
                                          f"{rel}:{no} (room {a}) includes {inc} (room {b})"))
    status = 0
    seen = set()
    for kind, where, what, a, b, detail in edges:
        key = (kind, where, what)
        if key in seen:
            continue
        seen.add(key)
        if key in allow:
            continue
        status = 1
        up = "a peer" if rank[a] == rank[b] else "above it"
        print(f"layers: upward {kind}: {detail}; room {b} is {up} in rooms.txt", file=sys.stderr)
    for key, no in sorted(allow.items(), key=lambda kv: kv[1]):
        if key not in seen:
            status = 1
            print(f"layers: {allow_file}:{no}: allowed edge '{' '.join(key)}' no longer exists: remove the line",
                  file=sys.stderr)
    if status == 0:
        print(f"layers: ok ({len(objs)} objects, {len(rank)} rooms, {len(allow)} allowed upward edges)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Builds tests/fixtures/js-layout/: a database and a bucket laid out exactly as
the JS SDK (@adcp/sdk row storage) writes them, from spec 02 (DDL, key layout,
intents) and the golden vectors of spec 01. Standard library only; the output
is committed, so tests need neither this script nor the network.

    scripts/gen-js-fixture.py SHARED_FIXTURE.json OUT_DIR

Layout written:
  fixture.json         tables as {table, columns, rows}; a value is a string,
                       {"json": V} (V as JSON text, markers inside replaced),
                       an integer, null, {"file": REL} (bytes of a file, BYTEA/BLOB)
                       or {"version_of": KEY} (native version of an object, known
                       only once the test stored it in its bucket)
  bodies/SHA.jsonl     postgres-kind chunk bodies (uncompressed canonical JSONL)
  bucket/KEY           objects at their JS keys (.jsonl / .jsonl.gz)
  expected/ID.jsonl    the canonical rows each row set must read back as
  row_sets.json        per row set: totals (for the envelope), expected content outcome
"""
import base64
import gzip
import hashlib
import json
import os
import sys

INSTALLATION = "5d7c1f3e-8a2b-4c6d-9e0f-1a2b3c4d5e6f"  # fixed, so keys are reproducible
NAMESPACE = "default"
ACCOUNT = "acct_js"
OBLIGATION = "obl_js_1"
PERIOD_START = "2026-10-01T00:00:00.000000Z"
PERIOD_END = "2026-10-02T00:00:00.000000Z"
PREFIX = "rows"
PREFIX_PLAIN = "plain"
ROOT = "jsroot"
OBJ_BINDING = "js-fs"
OBJ_BINDING_PLAIN = "js-fs-plain"
STARTS = {"obl_js_1": "2026-10-01T00:00:00.000000Z", "obl_js_2": "2026-10-02T00:00:00.000000Z"}
TEMPLATE = "{prefix}/{namespace_key}/{account_key}/{period_date}/{finality}/{revision_key}/{content_sha256}/{chunk_index}"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def jcs_ascii(v):
    # Only for values made of ASCII strings, integers, lists and dicts (keys
    # sort the same in UTF-16 and byte order then): compact, sorted.
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


NS_KEY = sha(jcs_ascii(["adcp.rows.v1", NAMESPACE, INSTALLATION]))


def account_key(acct):
    return sha(jcs_ascii(["adcp.account_key.v1", NS_KEY, acct]))


def revision_key(rs):
    return sha(jcs_ascii(["adcp.revision_key.v1", rs]))


def chunk_lines(lines):
    """spec 01 §5: chunks of <= 10000 rows / 8 MiB, segments of 500."""
    chunks, cur, cur_bytes = [], [], 0
    for ln in lines:
        if len(cur) == 10000 or (cur and cur_bytes + len(ln) > 8388608):
            chunks.append(cur)
            cur, cur_bytes = [], 0
        cur.append(ln)
        cur_bytes += len(ln)
    if cur:
        chunks.append(cur)
    out, ordinal = [], 0
    for ci, c in enumerate(chunks):
        body = b"".join(c)
        segs, off = [], 0
        for s in range(0, len(c), 500):
            seg = b"".join(c[s:s + 500])
            segs.append({"first_ordinal": ordinal + s, "row_count": len(c[s:s + 500]), "byte_offset": off,
                         "byte_count": len(seg), "sha256": sha(seg)})
            off += len(seg)
        out.append({"chunk_index": ci, "first_ordinal": ordinal, "row_count": len(c), "byte_count": len(body),
                    "sha256": sha(body), "segments": segs, "body": body})
        ordinal += len(c)
    return out


def manifest_sha(chunks):
    m = [{k: c[k] for k in ("chunk_index", "first_ordinal", "row_count", "byte_count", "sha256", "segments")}
         for c in chunks]
    return sha(jcs_ascii(m))


def rows_bytes(chunks):
    return b",".join(c["body"][:-1].replace(b"\n", b",") for c in chunks)


def envelope(rev_id, totals, chunks, n):
    pre = b'{"control_totals":' + jcs_ascii(totals) + b',"reporting_revision_id":' + jcs_ascii(rev_id) + \
        b',"reporting_rows":['
    b = pre + rows_bytes(chunks) + b'],"row_count":' + str(n).encode() + b"}"
    return sha(b), len(b)


def rows_v1(chunks):
    b = b"[" + rows_bytes(chunks) + b"]"
    return sha(b), len(b)


def deep_line(depth):
    # Nesting depth `depth` (the row object is level 1) and numbers in every
    # form RFC 8785 can emit, some beyond what any writer accepts; stored bytes
    # are what they are and a reader must not re-canonicalize them.
    nums = ["0", "-1", "1.5", "-12.5", "0.30000000000000004", "1e-7", "-1.23e-18", "5e-324", "0.000001",
            "123456789012", "9007199254740991", "100000000000000000000", "1e+21", "-1e+21",
            "1.7976931348623157e+308", "2.5e+25"]
    inner = "[" * (depth - 2) + '{"leaf":true}' + "]" * (depth - 2)
    return ('{"deep":' + inner + ',"numbers":[' + ",".join(nums) + '],"s":"\u00e9\U0001f600"}\n').encode()


def main():
    shared, out = sys.argv[1], sys.argv[2]
    vec = {v["id"]: v for v in json.load(open(shared))["vectors"]}
    for d in ("bodies", "bucket", "expected"):
        os.makedirs(os.path.join(out, d), exist_ok=True)

    tables = {
        "adcp_reporting_obligations": (["obligation_id", "configuration_id", "account_id", "period_ordinal",
                                        "period_start", "period_end"], []),
        "adcp_reporting_row_bindings": (["row_binding_id", "kind", "provider", "identity_config", "identity_sha256",
                                         "operational_config", "namespace_key"], []),
        "adcp_reporting_row_sets": (["row_set_id", "row_set_kind", "account_id", "obligation_id", "encoding",
                                     "digest_profile", "content_sha256", "canonical_byte_count", "row_count",
                                     "row_manifest_sha256", "chunk_count", "rows_shared_from_row_set_id",
                                     "row_binding_id"], []),
        "adcp_reporting_chunk_bodies": (["account_id", "obligation_id", "sha256", "body"], []),
        "adcp_reporting_row_chunks": (["row_set_id", "chunk_index", "account_id", "obligation_id", "first_ordinal",
                                       "row_count", "byte_count", "sha256", "segments", "object_key",
                                       "native_version", "compression", "physical_sha256",
                                       "physical_byte_count"], []),
        "adcp_reporting_row_write_intents": (["row_binding_id", "account_id", "row_set_id", "content_sha256", "state",
                                              "owner_token", "created_objects", "expires_at"], []),
    }

    def add(t, row):
        cols, rows = tables[t]
        assert len(row) == len(cols), t
        rows.append(row)

    add("adcp_reporting_obligations", [OBLIGATION, "cfg_js", ACCOUNT, 0, PERIOD_START, PERIOD_END])
    add("adcp_reporting_obligations", ["obl_js_2", "cfg_js", ACCOUNT, 1, "2026-10-02T00:00:00.000000Z",
                                       "2026-10-03T00:00:00.000000Z"])
    # The implicit postgres binding as JS registers it (§5.2: identity of ["postgres","postgres",{}]).
    add("adcp_reporting_row_bindings", ["postgres", "postgres", "postgres", "{}",
                                        sha(jcs_ascii(["postgres", "postgres", {}])), "{}", NS_KEY])
    bindings = {}
    # One prefix per binding (this ledger refuses two bindings over one store prefix).
    for bid, comp, prefix in ((OBJ_BINDING, "gzip", PREFIX), (OBJ_BINDING_PLAIN, "none", PREFIX_PLAIN)):
        ident = {"keyTemplate": TEMPLATE, "location": {"root": ROOT}, "prefix": prefix}
        add("adcp_reporting_row_bindings", [bid, "object", "filesystem", jcs_ascii(ident).decode(),
                                            sha(jcs_ascii(["object", "filesystem", ident])),
                                            jcs_ascii({"compression": comp}).decode(), NS_KEY])
        bindings[bid] = comp

    meta = {}
    bodies_seen = set()

    def row_set(rs_id, kind, lines, binding, totals=None, obligation=OBLIGATION, finality="snapshot",
                shared_from=None, chunks=None, locators=None, envelope_known=True):
        chunks = chunks if chunks is not None else chunk_lines(lines)
        n = sum(c["row_count"] for c in chunks)
        if kind == "revision":
            digest, nbytes = envelope(rs_id, totals or [], chunks, n)
            profile = "revision_envelope_v1"
        else:
            digest, nbytes = rows_v1(chunks)
            profile = "rows_v1"
        add("adcp_reporting_row_sets", [rs_id, kind, ACCOUNT, obligation, "adcp_canonical_jsonl_v1", profile, digest,
                                        nbytes, n, manifest_sha(chunks), len(chunks), shared_from, binding])
        locs = []
        for c in chunks:
            # JS: JSON.stringify(manifest.segments) into a JSONB column.
            segs = json.dumps(c["segments"], separators=(",", ":"))
            if binding == "postgres":
                if (obligation, c["sha256"]) not in bodies_seen:
                    bodies_seen.add((obligation, c["sha256"]))
                    rel = "bodies/%s.jsonl" % c["sha256"]
                    open(os.path.join(out, rel), "wb").write(c["body"])
                    add("adcp_reporting_chunk_bodies", [ACCOUNT, obligation, c["sha256"], {"file": rel}])
                add("adcp_reporting_row_chunks", [rs_id, c["chunk_index"], ACCOUNT, obligation, c["first_ordinal"],
                                                  c["row_count"], c["byte_count"], c["sha256"], segs, None, None,
                                                  "none", None, None])
                continue
            if locators:
                key, phys = locators[c["chunk_index"]]
            else:
                comp = bindings[binding]
                phys = gzip.compress(c["body"], compresslevel=6, mtime=0) if comp == "gzip" else c["body"]
                key = "/".join([PREFIX if comp == "gzip" else PREFIX_PLAIN, NS_KEY, account_key(ACCOUNT), STARTS[obligation][:10].replace("-", "/"),
                                finality if kind == "revision" else "adjustment", revision_key(rs_id), digest,
                                "%06d" % c["chunk_index"]]) + (".jsonl.gz" if comp == "gzip" else ".jsonl")
                path = os.path.join(out, "bucket", key)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "wb").write(phys)
            locs.append((key, phys))
            add("adcp_reporting_row_chunks", [rs_id, c["chunk_index"], ACCOUNT, obligation, c["first_ordinal"],
                                              c["row_count"], c["byte_count"], c["sha256"], segs, key,
                                              {"version_of": key}, "gzip" if key.endswith(".gz") else "none",
                                              sha(phys), len(phys)])
        open(os.path.join(out, "expected", rs_id + ".jsonl"), "wb").write(b"".join(c["body"] for c in chunks))
        meta[rs_id] = {"kind": kind, "binding": binding, "rows": n, "totals": totals,
                       "content_without_totals": "verified" if kind == "adjustment" or not envelope_known
                       else "unchecked", "content_sha256": digest}
        return chunks, locs

    def vector_lines(v):
        return [ln + b"\n" for c in v["expected"]["chunks_base64"] for ln in base64.b64decode(c).split(b"\n")[:-1]]

    # Postgres-kind row sets from the golden vectors (their digests must match the vectors').
    for vid in ("single-row", "unicode-and-numbers", "three-segments"):
        v = vec[vid]
        rid = v["envelope"]["reporting_revision_id"]
        row_set(rid, "revision", vector_lines(v), "postgres", v["envelope"]["control_totals"])
        assert meta[rid]["content_sha256"] == v["expected"]["revision_content_sha256"], vid
    ev = vec["empty"]
    row_set(ev["envelope"]["reporting_revision_id"], "revision", [], "postgres", [])
    assert meta["rrev_fixture_empty"]["content_sha256"] == ev["expected"]["revision_content_sha256"]
    # An adjustment (rows_v1): its digest needs no totals.
    row_set("radj_js_1", "adjustment", [b'{"delta":-5,"package_id":"pkg_1"}\n', b'{"delta":2.5e-7}\n'], "postgres")
    # Object kind: gzip, two chunks (10,001 rows), and plain.
    totals = [{"name": "impressions", "value": "10001", "value_type": "integer"}]
    many = [('{"o":%d}\n' % i).encode() for i in range(10001)]
    gz_chunks, gz_locs = row_set("rrev_js_gzip", "revision", many, OBJ_BINDING, totals)
    uv = vec["unicode-and-numbers"]
    row_set("rrev_js_plain", "revision", vector_lines(uv), OBJ_BINDING_PLAIN, uv["envelope"]["control_totals"],
            finality="official", obligation="obl_js_2")
    # Header-only: a new revision sharing rrev_js_gzip's chunks and objects (§12).
    row_set("rrev_js_header_only", "revision", None, OBJ_BINDING, totals, shared_from="rrev_js_gzip",
            chunks=gz_chunks, locators=gz_locs)
    # Deep nesting (5,000 levels) and every number form, postgres kind.
    row_set("rrev_js_deep", "revision", [deep_line(5000), b'{"after":1}\n'], "postgres", [])
    # Intents as JS leaves them: camelCase created_objects (an abandoned upload), and
    # the spec's snake_case spelling (read both).
    orphan = "/".join([PREFIX, NS_KEY, account_key(ACCOUNT), "2026/10/01", "snapshot", revision_key("rrev_js_lost"),
                       "0" * 64, "000000"]) + ".jsonl.gz"
    opath = os.path.join(out, "bucket", orphan)
    os.makedirs(os.path.dirname(opath), exist_ok=True)
    open(opath, "wb").write(gzip.compress(b'{"lost":1}\n', compresslevel=6, mtime=0))
    add("adcp_reporting_row_write_intents", [OBJ_BINDING, ACCOUNT, "rrev_js_lost", "0" * 64, "open",
                                             "0b7e3c2a-1d4f-4a8b-9c6e-2f1a0b9c8d7e",
                                             {"json": [{"objectKey": orphan, "nativeVersion": {"version_of": orphan}}]},
                                             "2026-10-01T00:05:00.000000Z"])
    add("adcp_reporting_row_write_intents", [OBJ_BINDING, ACCOUNT, "rrev_js_lost2", "1" * 64, "open",
                                             "3c9d1e2f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
                                             {"json": [{"object_key": orphan + ".x", "native_version": "1:1:1:1"},
                                                                  {"objectKey": orphan + ".y", "nativeVersion": "2:2:2:2"}]},
                                             "2026-10-01T00:05:00.000000Z"])

    doc = {"installation_id": INSTALLATION, "deployment_namespace": NAMESPACE, "namespace_key": NS_KEY,
           "root_name": ROOT, "prefix": PREFIX,
           "tables": [{"table": t, "columns": c, "rows": r} for t, (c, r) in tables.items()]}
    with open(os.path.join(out, "fixture.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(out, "row_sets.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

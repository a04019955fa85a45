#!/usr/bin/env python3
"""zarrdump: CDL text on the committed hierarchies (written by zarr-python; see
tools/make_zarrdump_fixtures.py) compared exactly with the *.expected.txt beside them and, value by
value, with zarr-python's view (values, dimensions, -s storage) and with netCDF-C's (NCZarr, through
netCDF4-python: dimensions, variable types, attribute types and values); -h, -c, -v (an unknown name
is an error), typed attributes, NaN attributes, float32/float64 digits, fixed-length strings, a
corrupt chunk; --json compared with zarr-python's view; --help and the error exits.

    ZARRDUMP=build/zarrdump python3 tests/zarrdump/test_zarrdump.py

Exit status 0 when all pass, 1 on a failure, 77 (skipped) when zarr-python, numpy or netCDF4 is missing.
"""
import base64
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

try:
    import netCDF4
    import numpy as np
    import zarr
except ImportError as e:
    print(f"SKIP: zarr-python / numpy / netCDF4 not importable ({e})")
    sys.exit(77)

ZARRDUMP = os.environ.get("ZARRDUMP", "")
failures = []
passed = 0


def run(*args, expect_rc=0):
    p = subprocess.run([ZARRDUMP, *args], cwd=HERE, capture_output=True, text=True, timeout=120)
    assert p.returncode == expect_rc, f"zarrdump {' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}"
    return p.stdout, p.stderr


def case(fn):
    global passed
    try:
        fn()
        passed += 1
        print(f"PASS {fn.__name__}")
    except AssertionError as e:
        failures.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {e}")


# ---------------------------------------------------------------------------------------------
# a reader for the CDL zarrdump prints (the subset ncdump prints for netCDF-4 files)

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^,\s]+')
UNESCAPE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"'}
SUFFIXES = [("ULL", "uint64"), ("UB", "uint8"), ("US", "uint16"), ("LL", "int64"), ("U", "uint32"), ("b", "int8"),
            ("s", "int16"), ("f", "float32")]


def cdl_token(tok):
    """One CDL value: (type, Python value); type is a numpy type name, 'char' for quoted text, 'int32' or
    'float64' for numbers without a suffix, 'bool' for true/false."""
    if tok.startswith('"'):
        return "char", re.sub(r"\\(.)", lambda m: UNESCAPE.get(m.group(1), m.group(1)), tok[1:-1])
    if tok in ("NaNf", "Infinityf", "-Infinityf"):
        return "float32", float(tok[:-1])
    if tok in ("NaN", "Infinity", "-Infinity"):
        return "float64", float(tok)
    if tok in ("true", "false"):
        return "bool", tok == "true"
    for suffix, typ in SUFFIXES:
        if tok.endswith(suffix):
            num = tok[: -len(suffix)]
            return typ, float(num) if typ == "float32" else int(num)
    if re.fullmatch(r"-?\d+", tok):
        return "int32", int(tok)
    return "float64", float(tok)


def cdl_values(text):
    return [cdl_token(t) for t in TOKEN.findall(text)]


def parse_cdl(out):
    """{group path: {"dims": {name: (size, unlimited)}, "vars": {name: (type, dims)}, "attrs": {(var, name):
    (is_string, [(type, value)])}, "data": {name: [values]}}}"""
    groups, stack, section, data_name, data_text = {}, [], None, None, ""
    for line in out.splitlines():
        s = line.strip()
        m = re.fullmatch(r"(?:netcdf|group:) (\S+) \{", s)
        if m:
            stack.append("" if s.startswith("netcdf") else m.group(1))
            groups["/".join(stack[1:])] = {"dims": {}, "vars": {}, "attrs": {}, "data": {}}
            continue
        g = groups["/".join(stack[1:])] if stack else None
        if s.startswith("}"):
            stack.pop()
            continue
        if s in ("dimensions:", "variables:", "// global attributes:", "// group attributes:", "data:"):
            section = s
            continue
        if not s or s.startswith("//"):
            continue
        if section == "dimensions:":
            m = re.fullmatch(r"(\S+) = (?:UNLIMITED ; // \((\d+) currently\)|(\d+) ;)", s)
            assert m, line
            g["dims"][m.group(1)] = (int(m.group(2) or m.group(3)), m.group(2) is not None)
        elif section != "data:" and re.fullmatch(r"(string )?\S*:\S+ = .* ;(?: //.*)?", s):
            m = re.fullmatch(r"(string )?(\S*):(\S+) = (.*?) ;(?: //.*)?", s)
            g["attrs"][(m.group(2), m.group(3))] = (bool(m.group(1)), cdl_values(m.group(4)))
        elif section == "variables:":
            m = re.fullmatch(r"(\S+) (\S+?)(?:\((.*)\))? ;", s)
            assert m, line
            g["vars"][m.group(2)] = (m.group(1), tuple(m.group(3).split(", ")) if m.group(3) else ())
        elif section == "data:":
            if data_name is None:
                m = re.fullmatch(r"(\S+) =(.*)", s)
                assert m, line
                data_name, data_text = m.group(1), m.group(2)
            else:
                data_text += " " + s
            if re.search(r" ;(?: //.*)?$", data_text):
                text = re.sub(r" //[^\n]*?(?=  |$)", "", data_text)
                g["data"][data_name] = [v for _, v in cdl_values(re.sub(r" ;$", "", text.strip()))]
                data_name = None
    return groups


def close(got, want, rel):
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == want or abs(got - want) <= rel * abs(want)


def norm(v):
    """JSON fill values / values as comparable Python values (NaN as the string zarr uses)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, (np.floating,)):
        return "NaN" if np.isnan(v) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return v


def compare_array(node, z, fmt):
    assert node["node_type"] == "array"
    assert node["zarr_format"] == fmt == z.metadata.zarr_format
    assert node["shape"] == list(z.shape), (node["shape"], z.shape)
    assert node["chunk_shape"] == list(z.chunks), (node["path"], node["chunk_shape"], z.chunks)
    assert node["shard_shape"] == (list(z.shards) if z.shards else None), (node["shard_shape"], z.shards)
    grid = [math.ceil(s / c) for s, c in zip(z.shape, z.shards or z.chunks)]
    assert node["grid_shape"] == grid and node["chunks_total"] == math.prod(grid)
    # stored chunks, or shards for a sharded array (zarr-python 3.1.6: nchunks_initialized counts the inner
    # chunks of a sharded array; its _nshards_initialized counts stored shards)
    stored = z._nshards_initialized if z.shards else z.nchunks_initialized
    assert node["chunks_stored"] == stored, (node["path"], node["chunks_stored"], stored)
    assert node["attributes"] == dict(z.attrs), (node["attributes"], dict(z.attrs))
    md = z.metadata.to_dict()
    if fmt == 3:
        assert node["data_type"] == md["data_type"], (node["data_type"], md["data_type"])
        codecs = json.loads(json.dumps(md["codecs"], default=str))  # tuples -> lists
        assert node["codecs"] == codecs, (node["codecs"], codecs)
        dn = md.get("dimension_names")
        assert node["dimension_names"] == (list(dn) if dn else None), (node["dimension_names"], dn)
    else:
        assert node["data_type"] == z.dtype.name, (node["data_type"], z.dtype)
        comp = md.get("compressor")
        assert node["compressor"] == (comp.get_config() if hasattr(comp, "get_config") else comp), (node["compressor"], comp)
        filters = md.get("filters")
        if filters is not None:
            filters = [f.get_config() if hasattr(f, "get_config") else f for f in filters]
        assert node["filters"] == filters, (node["filters"], filters)
    assert norm(node["fill_value"]) == norm(z.fill_value), (node["fill_value"], z.fill_value)


def compare_group(node, g, fmt, path=""):
    assert node["node_type"] == "group" and node["path"] == path and node["zarr_format"] == fmt
    assert node["attributes"] == dict(g.attrs), (node["attributes"], dict(g.attrs))
    members = dict(g.members())
    names = [c["path"].rsplit("/", 1)[-1] for c in node["children"]]
    assert names == sorted(members), (names, sorted(members))
    for child in node["children"]:
        m = members[child["path"].rsplit("/", 1)[-1]]
        if isinstance(m, zarr.Group):
            compare_group(child, m, fmt, child["path"])
        else:
            compare_array(child, m, fmt)


def flat(node):
    if node["node_type"] == "array":
        yield node
    else:
        for c in node.get("children", []):
            yield from flat(c)


def json_values():
    root = zarr.open_group(str(HERE / "small.zarr"), mode="r")
    for region, sel in [("0:4,1:5:2", (slice(0, 4), slice(1, 5, 2))), ("3,0:8", (3, slice(0, 8))),
                        (":,:", (slice(None), slice(None))), ("2:,:3", (slice(2, None), slice(0, 3)))]:
        out, _ = run("--json", "-d", region, "small.zarr")
        arrays = {a["path"]: a for a in flat(json.loads(out))}
        for path in ("temperature", "sub/sharded"):
            z = root[path]
            want = np.asarray(z[sel]).ravel().tolist()
            got = arrays[path]["data"]["values"]
            assert [norm(x) for x in got] == [norm(x) for x in want], (path, region, got, want)
        for path in ("counts", "names", "sub/flags"):
            assert arrays[path].get("data") is None, (path, arrays[path].get("data"))
    for path, sel in [("counts", slice(None)), ("names", slice(None)), ("sub/flags", slice(None))]:
        out, _ = run("--json", "-v", path, "small.zarr")
        arrays = {a["path"]: a for a in flat(json.loads(out))}
        assert list(arrays) == [path], list(arrays)
        want = [str(x) if isinstance(x, str) else norm(x) for x in np.asarray(root[path][sel]).ravel().tolist()]
        assert arrays[path]["data"]["values"] == want, (arrays[path]["data"]["values"], want)
    # an array path directly, with a region
    out, _ = run("--json", "-d", "1:9:3", "small.zarr/counts")
    node = json.loads(out)
    assert node["path"] == "" and node["data"] == {"start": [1], "count": [3], "step": [3],
                                                   "values": [int(x) for x in root["counts"][1:9:3]]}, node["data"]
    # v2 values (f8: nothing stored, every value is the fill value)
    out, _ = run("--json", "-d", ":", "small_v2.zarr")
    arrays = {a["path"]: a for a in flat(json.loads(out))}
    assert arrays["f8"]["data"]["values"] == [2.5] * 5




# ---------------------------------------------------------------------------------------------
# CDL: exact text

def expect(name, *args):
    out, _ = run(*args)
    want = (HERE / name).read_text()
    assert out == want, f"output differs from {name}:\n{out}"


def text_small():
    expect("small.expected.txt", "small.zarr")


def text_small_v2():
    expect("small_v2.expected.txt", "small_v2.zarr")


def text_data():
    expect("small_data.expected.txt", "-v", "temperature,sub/sharded,names", "-d", "1:4,1:5:2", "small.zarr")


def text_storage():
    expect("small_storage.expected.txt", "-h", "-s", "small.zarr")


def text_cdl():
    expect("cdl.expected.txt", "cdl.zarr")


def text_strings():
    expect("strings.expected.txt", "strings.zarr")
    out, _ = run("-h", "strings.zarr")  # names escaped as ncdump escapes them
    assert '\t\t:two\\ words = "x" ;\n' in out and "\t\t:\\3d = 1 ;\n" in out, out
    out, _ = run("strings_v2.zarr")
    assert out == (HERE / "strings.expected.txt").read_text().replace("netcdf strings {", "netcdf strings_v2 {"), out


def text_netcdf_types():
    """netCDF-4's user-defined types as h5tozarr records them: a `types:` section per group (enum and
    compound, as ncdump prints them), variables declared with their type's name, a char array (1-byte
    strings) declared char with one string per row; the record read both as a string holding JSON (as
    h5tozarr writes it) and as an object (the subgroup's, as earlier versions wrote it)."""
    expect("netcdf_types.expected.txt", "netcdf_types.zarr")
    out, _ = run("netcdf_types.zarr")
    assert "types:\n  ubyte enum cloud_t {clear = 0, cumulus = 1, missing = 255} ;\n" in out, out
    assert "\tcloud_t cloud(x) ;\n" in out and "\tchar code(x, n4) ;\n" in out, out
    assert ' code =\n  "ab",\n  "wxyz",\n  "" ;\n' in out, out
    assert "  types:\n    short enum level_t {low = -1, high = 1} ;\n" in out, out


# ---------------------------------------------------------------------------------------------
# CDL against zarr-python

def walk(group, path=""):
    for name, m in sorted(group.members()):
        p = f"{path}/{name}" if path else name
        if isinstance(m, zarr.Group):
            yield from walk(m, p)
        else:
            yield path, name, m


def cdl_vs_zarr_python():
    """Every array's values, dimension names and sizes, and its non-internal attributes' values."""
    for fixture in ("small.zarr", "small_v2.zarr", "cdl.zarr", "cdl_v2.zarr", "strings.zarr", "strings_v2.zarr"):
        out, _ = run(fixture)
        groups = parse_cdl(out)
        root = zarr.open_group(str(HERE / fixture), mode="r")
        for gpath, name, z in walk(root):
            g = groups[gpath]
            typ, dims = g["vars"][name]
            if z.metadata.zarr_format == 3:
                names = z.metadata.dimension_names
            else:
                names = z.attrs.get("_ARRAY_DIMENSIONS")
            want_dims = tuple(n if n else f"_Anonymous_Dim_{s}" for n, s in zip(names or [None] * z.ndim, z.shape))
            assert dims == want_dims, (fixture, name, dims, want_dims)
            for d, size in zip(dims, z.shape):  # declared here or in an enclosing group, with this size
                scopes = [groups["/".join(gpath.split("/")[:k])] for k in range(len(gpath.split("/")) if gpath else 0, -1, -1)]
                declared = next(s["dims"][d] for s in [g] + scopes if d in s["dims"])
                assert declared[0] == size, (fixture, name, d, declared, size)
            got = g["data"][name]
            want = np.asarray(z[...]).ravel().tolist()
            assert len(got) == len(want), (fixture, name, got, want)
            for a, b in zip(got, want):
                if isinstance(b, bytes):
                    b = b.decode()
                if isinstance(b, float):
                    rel = 5e-7 if z.dtype == np.float32 else 5e-15
                    assert close(a, b, rel), (fixture, name, a, b)
                else:
                    assert a == b, (fixture, name, a, b)
            for key, val in z.attrs.items():
                if key in ("_libzarr_hdf5", "_ARRAY_DIMENSIONS"):
                    continue
                _, vals = g["attrs"][(name, key)]
                got = [v for _, v in vals]
                if isinstance(val, str) and key == "_FillValue" and z.dtype.kind == "f":  # xarray's base64 float64
                    want = struct.unpack("<d", base64.b64decode(val))[0]
                    assert len(got) == 1 and close(got[0], want, 5e-7), (name, key, got, want)
                elif isinstance(val, str):
                    assert got == [val], (name, key, got, val)
                elif isinstance(val, (dict, type(None))) or (isinstance(val, list) and val and isinstance(val[0], str)):
                    assert json.loads(got[0]) == val, (name, key, got, val)
                else:
                    want = val if isinstance(val, list) else [val]
                    assert len(got) == len(want) and all(close(a, float(b), 5e-7) for a, b in zip(got, want)), (name, key, got, want)


def float_digits():
    """float32 values print with %.7g and float64 with %.15g (ncdump's precisions), compared with Python's
    formatting of zarr-python's values."""
    out, _ = run("-v", "t,d", "cdl_v2.zarr")
    data = parse_cdl(out)[""]["data"]
    root = zarr.open_group(str(HERE / "cdl_v2.zarr"), mode="r")
    text = out[out.index("data:"):]
    for name, digits in (("t", 7), ("d", 15)):
        want = [float(f"{float(x):.{digits}g}") for x in np.asarray(root[name][...]).ravel()]
        assert data[name] == want, (name, data[name], want)
    assert "0.3333333," in text and "123456.8," in text and "0.333333333333333," in text, text
    assert "0.10000000149" not in text, text  # what %.17g printed before


def wrapping():
    """Rows wrap at 80 columns with no trailing blanks; wrapped values still read back (cdl_vs_zarr_python)."""
    for fixture in ("cdl_v2.zarr", "cdl.zarr", "small.zarr"):
        out, _ = run(fixture)
        for line in out.splitlines():
            assert len(line.expandtabs(8)) <= 80 or "_Codecs" in line, (fixture, line)
            assert line == line.rstrip(), (fixture, repr(line))
    out, _ = run("-v", "wide", "cdl_v2.zarr")
    rows = out[out.index(" wide ="):].splitlines()
    assert len(rows) > 5 and all(r.startswith("    ") for r in rows[1:-1]), rows


def header_only():
    full, _ = run("cdl.zarr")
    head, _ = run("-h", "cdl.zarr")
    assert "data:" not in head and " = " in head, head
    # the header is the full output without its data sections
    stripped = re.sub(r"(?m)^( *)data:\n(?:\n\1 .*\n(?:\1  .*\n)*)+", "", full)
    assert head == stripped, (head, stripped)


def coordinates():
    out, _ = run("-c", "cdl.zarr")
    groups = parse_cdl(out)
    assert sorted(groups[""]["data"]) == ["lat", "lon", "time"], groups[""]["data"]
    assert groups["obs"]["data"] == {}, groups["obs"]["data"]
    root = zarr.open_group(str(HERE / "cdl.zarr"), mode="r")
    for name in ("lat", "lon", "time"):
        assert groups[""]["data"][name] == [float(f"{x:.7g}") for x in root[name][...]], name
    # -c with -v: the coordinates and the named arrays
    out, _ = run("-c", "-v", "obs/obs_lat", "cdl.zarr")
    groups = parse_cdl(out)
    assert sorted(groups[""]["data"]) == ["lat", "lon", "time"] and list(groups["obs"]["data"]) == ["obs_lat"]


def variables():
    out, _ = run("-v", "temp,obs/obs_lat", "cdl.zarr")
    groups = parse_cdl(out)
    assert list(groups[""]["data"]) == ["temp"] and list(groups["obs"]["data"]) == ["obs_lat"], groups
    assert len(groups[""]["vars"]) == 7, groups[""]["vars"]  # the header shows every variable
    root = zarr.open_group(str(HERE / "cdl.zarr"), mode="r")
    assert groups[""]["data"]["temp"] == root["temp"][...].ravel().tolist()
    # an array path given directly: -v takes its name
    out, _ = run("-v", "temp", "cdl.zarr/temp")
    assert parse_cdl(out)[""]["data"]["temp"] == root["temp"][...].ravel().tolist()


def unknown_variable():
    for names in ("no_such_var", "temp,no_such_var", "obs", "obs/nope", ","):
        out, err = run("-v", names, "cdl.zarr", expect_rc=1 if names != "," else 2)
        assert out == "", (names, out)
        if names != ",":
            assert "no array" in err and (names.split(",")[-1]) in err, (names, err)
    out, err = run("--json", "-v", "no_such_var", "small.zarr", expect_rc=1)
    assert out == "" and "no_such_var" in err, (out, err)


def typed_attributes():
    out, _ = run("-h", "cdl.zarr")
    for line in ("temp:scale_factor = 0.01f ;", "temp:add_offset = 273.15f ;", "temp:_FillValue = -32767s ;",
                 "temp:valid_range = -5000s, 5000s ;", "temp:bytes = 1b, -2b ;", "temp:ubytes = 1UB, 2UB ;",
                 "temp:ushort = 65535US ;", "temp:uint = 4000000000U ;", "temp:int64 = -1LL ;",
                 "temp:uint64 = 18446744073709551615ULL ;", "temp:single = 1.f ;", "temp:flagged = 1UB ;",
                 'string lat:units = "degrees_north" ;', 'lon:units = "degrees_east" ;',
                 "crs:semi_major_axis = 6378137. ;", ":big = 1099511627776LL ;", ":unsigned = 3000000000U ;",
                 ":reals = 1., 2.5, 1.e+20 ;", ":flag = 1UB ;", ':nested = "{\\"a\\":[1,2]}" ;',
                 "time = UNLIMITED ; // (2 currently)", "nv = 2 ;", "lat:_FillValue = -999.f ;",
                 "lon:_FillValue = NaNf ;", "time:_FillValue = NaN ;",
                 ":title = \"zarrdump\\'s \\\"CDL\\\" fixture\" ;"):
        assert "\t" + line + "\n" in out or "\t\t" + line + "\n" in out, (line, out)
    assert "\t\tquality:_FillValue = 0b ;\n\t\t// enum: GOOD = 0, BAD = 1, UNKNOWN = -1\n" in out, out
    assert "_libzarr_hdf5" not in out and "_ARRAY_DIMENSIONS" not in run("cdl_v2.zarr")[0]
    # temp has its own _FillValue attribute: the Zarr fill value is not printed again
    assert out.count("temp:_FillValue") == 1


def nan_attributes():
    """Bare NaN/Infinity in attributes (as zarr-python writes them), typed float32 by attribute_types or
    inferred double; libzarr reads them once core-json's change is in."""
    out, err = run("nan_attrs.zarr")
    for line in ("v:missing_value = NaNf ;", "v:valid_max = Infinityf ;", "v:valid_min = -Infinityf ;",
                 ":nan64 = NaN ;", ":inf64 = Infinity ;", ":list = 1., -Infinity, NaN ;", "v:_FillValue = NaNf ;"):
        assert "\t\t" + line + "\n" in out, (line, out)


def corrupt_chunk():
    out, err = run("corrupt.zarr", expect_rc=1)
    assert "ZARR_ERR_CODEC" in err and "corrupt.zarr/bad" in err, err
    assert err.startswith("zarrdump: reading corrupt.zarr/bad") and err.count("\n") == 1, err
    assert " ok = 1.5, 2.5, 3.5, 4.5 ;\n" in out and "bad =" not in out, out
    assert out.endswith("}\n") and "double bad(n) ;" in out, out
    out, err = run("--json", "corrupt.zarr", "-v", "bad", expect_rc=1)
    node = json.loads(out)["children"][0]
    assert node["path"] == "bad" and node["data"]["values"] is None, node


def storage_vs_zarr_python():
    """-s: _ChunkSizes, _ShardSizes, _Codecs / _Filters / _Compressor and _StoredChunks as zarr-python sees them."""
    for fixture in ("small.zarr", "small_v2.zarr"):
        out, _ = run("-h", "-s", fixture)
        groups = parse_cdl(out)
        root = zarr.open_group(str(HERE / fixture), mode="r")
        assert groups[""]["attrs"][("", "_ZarrFormat")][1] == [("int32", root.metadata.zarr_format)]
        for gpath, name, z in walk(root):
            attrs = {k[1]: v[1] for k, v in groups[gpath]["attrs"].items() if k[0] == name}
            assert [v for _, v in attrs["_ChunkSizes"]] == list(z.chunks), (name, attrs)
            if z.shards:
                assert [v for _, v in attrs["_ShardSizes"]] == list(z.shards), (name, attrs)
            stored = z._nshards_initialized if z.shards else z.nchunks_initialized
            assert attrs["_StoredChunks"] == [("int32", stored)], (name, attrs["_StoredChunks"], stored)
            md = z.metadata.to_dict()
            if z.metadata.zarr_format == 3:
                assert json.loads(attrs["_Codecs"][0][1]) == json.loads(json.dumps(md["codecs"], default=str))
            else:
                comp = md.get("compressor")
                assert json.loads(attrs["_Compressor"][0][1]) == (comp.get_config() if hasattr(comp, "get_config") else comp)


NP_TO_CDL = {"int8": "byte", "int16": "short", "int32": "int", "int64": "int64", "uint8": "ubyte",
             "uint16": "ushort", "uint32": "uint", "uint64": "uint64", "float32": "float", "float64": "double"}


def cdl_vs_netcdf_c():
    """netCDF-C (NCZarr in pure-Zarr mode, through netCDF4-python) reads cdl_v2.zarr: its dimensions,
    variable types and dimensions, attribute types and values, and the values are zarrdump's."""
    out, _ = run("cdl_v2.zarr")
    g = parse_cdl(out)[""]
    ds = netCDF4.Dataset(f"file://{HERE / 'cdl_v2.zarr'}#mode=zarr,file")
    try:
        assert {k: (len(d), d.isunlimited()) for k, d in ds.dimensions.items()} == g["dims"], (ds.dimensions, g["dims"])
        assert set(ds.variables) == set(g["vars"]), (set(ds.variables), g["vars"])
        for name, v in ds.variables.items():
            typ = "string" if v.dtype is str else NP_TO_CDL[v.dtype.name]
            assert g["vars"][name] == (typ, v.dimensions), (name, g["vars"][name], typ, v.dimensions)
            want = np.asarray(v[...]).ravel().tolist()
            got = g["data"][name]
            assert len(got) == len(want) and all(a == b if isinstance(b, str) else close(a, b, 5e-7)
                                                 for a, b in zip(got, want)), (name, got, want)
            for att in v.ncattrs():
                if att != "_FillValue":
                    assert (name, att) in g["attrs"], (name, att)
        for att in ds.ncattrs():
            val = ds.getncattr(att)
            is_string, vals = g["attrs"][("", att)]
            if isinstance(val, str):
                assert vals[0][0] == "char" and not is_string, (att, vals)
                try:
                    assert json.loads(vals[0][1]) == json.loads(val), (att, vals, val)
                except json.JSONDecodeError:
                    assert vals[0][1] == val, (att, vals, val)
                continue
            arr = np.atleast_1d(val)
            types = {t for t, _ in vals}
            assert types == {arr.dtype.name}, (att, types, arr.dtype)
            assert [v for _, v in vals] == arr.tolist(), (att, vals, arr)
    finally:
        ds.close()


def json_small():
    out, _ = run("--json", "small.zarr")
    compare_group(json.loads(out), zarr.open_group(str(HERE / "small.zarr"), mode="r"), 3)


def json_small_v2():
    out, _ = run("--json", "small_v2.zarr")
    compare_group(json.loads(out), zarr.open_group(str(HERE / "small_v2.zarr"), mode="r", zarr_format=2), 2)


def json_strings():
    for fixture in ("strings.zarr", "strings_v2.zarr"):
        out, _ = run("--json", "-d", ":", fixture)
        root = zarr.open_group(str(HERE / fixture), mode="r")
        for a in flat(json.loads(out)):
            want = [x.decode() if isinstance(x, bytes) else x for x in np.asarray(root[a["path"]][...]).tolist()]
            assert a["data"]["values"] == want, (fixture, a["path"], a["data"]["values"], want)


def structs():
    """Structured elements as ncdump prints compounds ({x, y, "name"}), and as JSON objects, against zarr-python."""
    for fixture in ("structs.zarr", "structs_v2.zarr"):
        z = zarr.open_group(str(HERE / fixture), mode="r")["rec"]
        vals = z[...]
        out, _ = run("-v", "rec", fixture)
        want = ", ".join(f'{{{int(r["x"])}, {float(r["y"]):.15g}, "{r["name"].decode()}"}}' for r in vals)
        assert f"\n rec = {want} ;\n" in out, (fixture, out, want)
        assert "\tstruct rec(_Anonymous_Dim_2) ;\n" in out, out
        out, _ = run("--json", "-v", "rec", fixture)
        got = json.loads(out)["children"][0]["data"]["values"]
        assert got == [{"x": int(r["x"]), "y": float(r["y"]), "name": r["name"].decode()} for r in vals], (fixture, got)
    # a structured fill value prints by field, as ncdump prints a compound's (not as its base64 text)
    dt = np.dtype([("x", "<i4"), ("y", "<f8"), ("name", "S4")])
    with tempfile.TemporaryDirectory(dir=os.environ.get("ZARR_TEST_TMPDIR")) as d:
        zarr.create_array(f"{d}/sf.zarr", shape=(3,), dtype=dt, fill_value=np.array((7, 2.5, b"ab"), dt)[()],
                          zarr_format=2)
        fv = zarr.open_array(f"{d}/sf.zarr", mode="r").fill_value
        out, _ = run("-h", f"{d}/sf.zarr")
        want = f'\t\tsf:_FillValue = {{{int(fv["x"])}, {float(fv["y"]):g}, "{fv["name"].decode()}"}} ;\n'
        assert want == '\t\tsf:_FillValue = {7, 2.5, "ab"} ;\n' and want in out, out


def help_and_errors():
    out, _ = run("--help")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "--json", "-d, --data",
                    "-h  Header only", "-c  ", "-s  "):
        assert section in out, section
    out, _ = run("--version")
    assert out.startswith("zarrdump (libzarr ")
    _, err = run("--bogus", expect_rc=2)
    assert "unknown option --bogus" in err
    run(expect_rc=2)
    _, err = run("-h", "-v", "temp", "cdl.zarr", expect_rc=2)
    assert "-h prints no values" in err, err
    _, err = run("no-such.zarr", expect_rc=1)
    assert "ZARR_ERR_NOT_FOUND" in err, err
    _, err = run("-d", "0:x", "small.zarr/counts", expect_rc=1)
    assert "malformed" in err, err
    _, err = run("-d", "10", "small.zarr/counts", expect_rc=1)
    assert "outside the shape" in err, err


def main():
    if not ZARRDUMP or not Path(ZARRDUMP).exists():
        print(f"FAIL: set ZARRDUMP to the zarrdump program (got {ZARRDUMP!r})")
        sys.exit(1)
    for fn in (text_small, text_small_v2, text_data, text_storage, text_cdl, text_strings, text_netcdf_types,
               cdl_vs_zarr_python,
               float_digits, wrapping, header_only, coordinates, variables, unknown_variable, typed_attributes,
               nan_attributes, corrupt_chunk, storage_vs_zarr_python, cdl_vs_netcdf_c, json_small, json_small_v2,
               json_values, json_strings, structs, help_and_errors):
        case(fn)
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

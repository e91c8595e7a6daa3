#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# pto_nlspec.py: Documentation/netlink/specs/pto.yaml against what
# implements it (TAP output).
#
#   pto_nlspec.py header   the spec against the kernel's genetlink schema
#                          (Documentation/netlink/genetlink.yaml of the
#                          kernel source, extracted once from
#                          LINUX_SOURCE_TAR into build/netlink/), and
#                          uapi/linux/pto.h: the family, group, command and
#                          attribute names and values (no device needed)
#   pto_nlspec.py kernel   the loaded module's family, through the
#                          controller: operations (do, dump, admin-perm),
#                          the request policy of every operation with its
#                          types and checks, nested policies, multicast
#                          groups (needs pto.ko, in the VM)
#   pto_nlspec.py parallel with device 0's HWS count held odd by its
#                          AICPU (pto_nlev aicpu-odd): an hws-get waits
#                          for it, and a dev-get sent meanwhile is
#                          answered first (the family is parallel_ops,
#                          no genetlink mutex held while hws-get waits)
#
# Only the attributes a request accepts are in the kernel's policies; the
# reply and event attributes are checked through the header (their
# values) and by pto_netlink.sh (that they arrive).

import errno
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

import yaml

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC = os.path.join(TOP, "Documentation/netlink/specs/pto.yaml")
HEADER = os.path.join(TOP, "uapi/linux/pto.h")
SCHEMA = os.path.join(TOP, "build/netlink/genetlink.yaml")
SCHEMA_IN_TAR = "linux-source-6.12/Documentation/netlink/genetlink.yaml"

# <linux/netlink.h>, <linux/genetlink.h>
NETLINK_GENERIC = 16
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY, CTRL_CMD_GETPOLICY = 3, 10
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
CTRL_ATTR_OPS, CTRL_ATTR_MCAST_GROUPS = 6, 7
CTRL_ATTR_POLICY, CTRL_ATTR_OP_POLICY = 8, 9
CTRL_ATTR_OP_ID, CTRL_ATTR_OP_FLAGS = 1, 2
CTRL_ATTR_MCAST_GRP_NAME = 1
CTRL_ATTR_POLICY_DO, CTRL_ATTR_POLICY_DUMP = 1, 2
GENL_ADMIN_PERM, GENL_CMD_CAP_DO, GENL_CMD_CAP_DUMP = 0x1, 0x2, 0x4
GENL_UNS_ADMIN_PERM = 0x10
NL_POLICY_TYPE_ATTR_TYPE = 1
NL_POLICY_TYPE_ATTR_MIN_VALUE_U, NL_POLICY_TYPE_ATTR_MAX_VALUE_U = 4, 5
NL_POLICY_TYPE_ATTR_MIN_LENGTH, NL_POLICY_TYPE_ATTR_MAX_LENGTH = 6, 7
NL_POLICY_TYPE_ATTR_POLICY_IDX = 8

# YAML type -> NL_ATTR_TYPE_*
NL_TYPES = {"flag": 1, "u8": 2, "u16": 3, "u32": 4, "u64": 5, "s8": 6,
            "s16": 7, "s32": 8, "s64": 9, "binary": 10, "string": 11,
            "nest": 13}
UMAX = {"u8": 0xff, "u16": 0xffff, "u32": 0xffffffff,
        "u64": 0xffffffffffffffff}


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} {name} # SKIP {why}")

    def check(self, name, errors):
        self.n += 1
        if errors:
            self.failed += 1
            for e in errors:
                print(f"# {e}")
            print(f"not ok {self.n} {name}")
        else:
            print(f"ok {self.n} {name}")

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def c_name(*parts):
    return "_".join(p.replace("-", "_") for p in parts).upper()


def load_spec():
    with open(SPEC, encoding="utf-8") as f:
        return yaml.safe_load(f)


def attr_sets(spec):
    return {s["name"]: s for s in spec["attribute-sets"]}


def attr_values(aset):
    """name -> value of an attribute set (from 1, or as given)."""
    vals, v = {}, 1
    for a in aset["attributes"]:
        v = a.get("value", v)
        vals[a["name"]] = v
        v += 1
    return vals


def op_values(spec):
    vals, v = {}, 1
    for op in spec["operations"]["list"]:
        v = op.get("value", v)
        vals[op["name"]] = v
        v += 1
    return vals


# ------------------------------------------------------------------------
# schema
# ------------------------------------------------------------------------

def check_schema(tap, spec):
    name = "spec follows the kernel's genetlink schema"
    try:
        import jsonschema
    except ImportError:
        tap.skip(name, "python3-jsonschema missing (scripts/deps.sh)")
        return
    if not os.path.exists(SCHEMA):
        tar = os.environ.get("LINUX_SOURCE_TAR",
                             "/usr/src/linux-source-6.12.tar.xz")
        os.makedirs(os.path.dirname(SCHEMA), exist_ok=True)
        with open(SCHEMA + ".tmp", "wb") as out:
            if subprocess.run(["tar", "-xOJf", tar, SCHEMA_IN_TAR],
                              stdout=out, check=False).returncode:
                tap.check(name, [f"cannot extract {SCHEMA_IN_TAR} from {tar}"])
                return
        os.rename(SCHEMA + ".tmp", SCHEMA)
    with open(SCHEMA, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    errors = [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
              for e in jsonschema.Draft7Validator(schema).iter_errors(spec)]
    tap.check(name, errors)


# ------------------------------------------------------------------------
# header
# ------------------------------------------------------------------------

def header_enum(text, name):
    """NAME -> value of `enum name { ... }` in the header, or None."""
    m = re.search(r"enum\s+" + name + r"\s*\{(.*?)\};", text, re.S)
    if not m:
        return None
    vals, v = {}, 0
    for entry in m.group(1).split(","):
        entry = re.sub(r"/\*.*?\*/", "", entry, flags=re.S).strip()
        if not entry:
            continue
        ident, _, expr = entry.partition("=")
        ident = ident.strip()
        if expr.strip():
            expr = expr.strip()
            m = re.fullmatch(r"\(?\s*(\w+)\s*-\s*1\s*\)?", expr)
            if re.fullmatch(r"\d+|0x[0-9a-fA-F]+", expr):
                v = int(expr, 0)
            elif m and vals.get(m.group(1)) is not None:
                v = vals[m.group(1)] - 1
            else:
                v = None
        vals[ident] = v
        v = v + 1 if v is not None else None
    return vals


def expect_enum(text, enum, prefix, values, last):
    got = header_enum(text, enum)
    if got is None:
        return [f"enum {enum} missing"]
    errors = []
    for name, v in values.items():
        ident = c_name(prefix, name)
        if got.get(ident) != v:
            errors.append(f"{ident}: header {got.get(ident)}, spec {v}")
    extra = [i for i in got if not i.startswith("__") and
             i != c_name(prefix, "max") and
             i not in {c_name(prefix, n) for n in values}]
    if extra:
        errors.append(f"enum {enum}: not in the spec: {extra}")
    if last and got.get(c_name(prefix, "max")) != max(values.values()):
        errors.append(f"{c_name(prefix, 'max')} is not the last value")
    return errors


def check_header(tap, spec):
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    name = spec["name"]
    groups = [g["name"] for g in spec["mcast-groups"]["list"]]
    errors = []
    if not re.search(r'#define\s+PTO_FAMILY_NAME\s+"' + name + '"', text):
        errors.append(f'PTO_FAMILY_NAME is not "{name}"')
    for g in groups:
        if not re.search(r"#define\s+" + c_name(name, "mcgrp", g) +
                         r'\s+"' + g + '"', text):
            errors.append(f"{c_name(name, 'mcgrp', g)} missing")
    tap.check("family and multicast group names", errors)

    for d in spec.get("definitions", []):
        if d["type"] != "enum":
            continue
        vals = {e["name"]: d.get("value-start", 0) + i
                for i, e in enumerate(d["entries"])}
        tap.check(f"enum {name}_{d['name']}",
                  expect_enum(text, c_name(name, d["name"]).lower(),
                              c_name(name, d["name"]), vals, False))
    for s in spec["attribute-sets"]:
        enum = s["enum-name"].replace("-", "_")
        tap.check(f"enum {enum}",
                  expect_enum(text, enum, c_name(name, "a", s["name"]),
                              attr_values(s), True))
    enum = spec["operations"]["enum-name"].replace("-", "_")
    tap.check(f"enum {enum}",
              expect_enum(text, enum, c_name(name, "cmd"), op_values(spec),
                          True))


# ------------------------------------------------------------------------
# kernel
# ------------------------------------------------------------------------

def nla_parse(data):
    """[(type, payload)] of a run of attributes."""
    out, off = [], 0
    while off + 4 <= len(data):
        length, typ = struct.unpack_from("=HH", data, off)
        if length < 4:
            break
        out.append((typ & 0x3fff, data[off + 4:off + length]))
        off += (length + 3) & ~3
    return out


def nla_u32(payload):
    return struct.unpack_from("=I", payload)[0]


def nla_uint(payload):
    return struct.unpack_from("=Q" if len(payload) == 8 else "=I",
                              payload)[0]


def nla(typ, payload):
    hdr = struct.pack("=HH", 4 + len(payload), typ)
    return hdr + payload + b"\0" * ((4 - len(payload) % 4) % 4)


def genl_send(s, family, cmd, flags, seq, attrs, reserved=0):
    """One request of @family on @s; @reserved: the generic netlink
    header's reserved byte."""
    payload = struct.pack("=BBH", cmd, 1, reserved) + attrs
    s.send(struct.pack("=IHHII", 16 + len(payload), family,
                       NLM_F_REQUEST | flags, seq, 0) + payload)


def genl_request(family, cmd, flags, attrs, reserved=0):
    """The replies of @family to one request: [attribute lists];
    @reserved: the generic netlink header's reserved byte."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    try:
        genl_send(s, family, cmd, flags, 1, attrs, reserved)
        replies = []
        while True:
            data = s.recv(1 << 20)
            off = 0
            while off < len(data):
                length, typ, _, _, _ = struct.unpack_from("=IHHII", data, off)
                msg = data[off + 16:off + length]
                off += (length + 3) & ~3
                if typ == NLMSG_DONE:
                    return replies
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("=i", msg)[0]
                    if err:
                        raise OSError(-err, os.strerror(-err))
                    return replies
                replies.append(nla_parse(msg[4:]))
    finally:
        s.close()


def ctrl_request(cmd, flags, attrs):
    """The controller's replies to one request: [attribute lists]."""
    return genl_request(GENL_ID_CTRL, cmd, flags, attrs)


def check_reserved(fid, cmd, index_attr):
    """Errors: @cmd of device 0 (attribute @index_attr) must work, and
    be refused with EINVAL when the header's reserved byte is set."""
    errors = []
    index = nla(index_attr, struct.pack("=I", 0))
    try:
        genl_request(fid, cmd, NLM_F_ACK, index)
    except OSError as e:
        errors.append(f"the plain request failed: {e}")
    try:
        genl_request(fid, cmd, NLM_F_ACK, index, reserved=0xff)
        errors.append("a reserved header byte of 0xff was accepted")
    except OSError as e:
        if e.errno != errno.EINVAL:
            errors.append(f"a reserved header byte of 0xff: {e}, "
                          "not EINVAL")
    return errors


def kernel_family(name):
    attrs = nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0")
    fam = dict(ctrl_request(CTRL_CMD_GETFAMILY, NLM_F_ACK, attrs)[0])
    ops = {}
    for _, op in nla_parse(fam.get(CTRL_ATTR_OPS, b"")):
        o = dict(nla_parse(op))
        ops[nla_u32(o[CTRL_ATTR_OP_ID])] = nla_u32(o[CTRL_ATTR_OP_FLAGS])
    groups = set()
    for _, g in nla_parse(fam.get(CTRL_ATTR_MCAST_GROUPS, b"")):
        groups.add(dict(nla_parse(g))[CTRL_ATTR_MCAST_GRP_NAME]
                   .rstrip(b"\0").decode())
    op_policy, policies = {}, {}
    for msg in ctrl_request(CTRL_CMD_GETPOLICY, NLM_F_DUMP, attrs):
        for typ, payload in msg:
            if typ == CTRL_ATTR_OP_POLICY:
                for cmd, p in nla_parse(payload):
                    op_policy[cmd] = {k: nla_u32(v)
                                      for k, v in nla_parse(p)}
            elif typ == CTRL_ATTR_POLICY:
                for idx, pol in nla_parse(payload):
                    for attr, desc in nla_parse(pol):
                        policies.setdefault(idx, {})[attr] = {
                            k: nla_uint(v) for k, v in nla_parse(desc)}
    fid = struct.unpack("=H", fam[CTRL_ATTR_FAMILY_ID][:2])[0]
    return ops, groups, op_policy, policies, fid


def expect_attr(a, desc, sets, policies, where):
    """Errors of one policy entry @desc against the spec's attribute @a."""
    errors = []
    want = NL_TYPES.get(a["type"])
    got = desc.get(NL_POLICY_TYPE_ATTR_TYPE)
    if a["type"] == "string" and got == 12:     # NLA_NUL_STRING
        got = want
    if got != want:
        return [f"{where}: type {got}, spec {a['type']} ({want})"]
    checks = a.get("checks", {})
    if a["type"] in UMAX:
        rng = (desc.get(NL_POLICY_TYPE_ATTR_MIN_VALUE_U),
               desc.get(NL_POLICY_TYPE_ATTR_MAX_VALUE_U))
        spec_rng = (checks.get("min", 0), checks.get("max", UMAX[a["type"]]))
        if rng != spec_rng:
            errors.append(f"{where}: range {rng}, spec {spec_rng}")
    if a["type"] == "binary":
        lens = (desc.get(NL_POLICY_TYPE_ATTR_MIN_LENGTH),
                desc.get(NL_POLICY_TYPE_ATTR_MAX_LENGTH))
        n = checks.get("exact-len")
        spec_lens = (n, n) if n is not None else \
            (checks.get("min-len"), checks.get("max-len"))
        if lens != spec_lens:
            errors.append(f"{where}: length {lens}, spec {spec_lens}")
    if a["type"] == "nest":
        idx = desc.get(NL_POLICY_TYPE_ATTR_POLICY_IDX)
        nested = sets[a["nested-attributes"]]
        errors += expect_policy(policies.get(idx, {}), nested,
                                [x["name"] for x in nested["attributes"]],
                                sets, policies, f"{where}.")
    return errors


def expect_policy(policy, aset, names, sets, policies, where=""):
    """Errors of a kernel policy against the attributes @names of @aset."""
    values = attr_values(aset)
    by_name = {a["name"]: a for a in aset["attributes"]}
    names = [n for n in names if by_name[n]["type"] != "pad"]
    errors = []
    accepted = {k for k, d in policy.items()
                if d.get(NL_POLICY_TYPE_ATTR_TYPE)}
    for n in names:
        if values[n] not in policy:
            errors.append(f"{where}{n}: not in the kernel's policy")
        else:
            errors += expect_attr(by_name[n], policy[values[n]], sets,
                                  policies, where + n)
    extra = accepted - {values[n] for n in names}
    if extra:
        errors.append(f"{where}: kernel accepts attributes {sorted(extra)}"
                      " the spec does not list")
    return errors


def check_op(op, cmd, kernel, sets):
    ops, _, op_policy, policies, _ = kernel
    flags = ops.get(cmd)
    if flags is None:
        return ["not in the kernel's family"]
    errors = []
    admin = "admin-perm" in op.get("flags", []) or \
        "uns-admin-perm" in op.get("flags", [])
    if bool(flags & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM)) != admin:
        errors.append(f"admin permission {not admin}, spec {admin}")
    aset = sets[op["attribute-set"]]
    for mode, cap, pol in (("do", GENL_CMD_CAP_DO, CTRL_ATTR_POLICY_DO),
                           ("dump", GENL_CMD_CAP_DUMP,
                            CTRL_ATTR_POLICY_DUMP)):
        if bool(flags & cap) != (mode in op):
            errors.append(f"{mode}: kernel {bool(flags & cap)}, "
                          f"spec {mode in op}")
            continue
        if mode not in op:
            continue
        idx = op_policy.get(cmd, {}).get(pol)
        names = op[mode].get("request", {}).get("attributes", [])
        errors += expect_policy(policies.get(idx, {}), aset, names, sets,
                                policies, f"{mode} ")
    return errors


def check_kernel(tap, spec):
    sets = attr_sets(spec)
    kernel = kernel_family(spec["name"])
    ops, groups = kernel[0], kernel[1]
    values = op_values(spec)
    for op in spec["operations"]["list"]:
        cmd = values[op["name"]]
        if "event" in op:
            tap.check(f"event {op['name']} is no operation",
                      [f"command {cmd} is an operation"] if cmd in ops
                      else [])
            continue
        tap.check(f"operation {op['name']}", check_op(op, cmd, kernel, sets))
    known = {values[o["name"]] for o in spec["operations"]["list"]}
    tap.check("no operation outside the spec",
              [f"command {c}" for c in ops if c not in known])
    want = {g["name"] for g in spec["mcast-groups"]["list"]}
    tap.check("multicast groups",
              [] if groups == want else [f"kernel {groups}, spec {want}"])
    fid = kernel[4]
    index_attr = attr_values(sets["dev"])["index"]
    for name in ("dev-get", "counters-get"):
        tap.check(f"{name} checks the reserved header byte",
                  check_reserved(fid, values[name], index_attr))


def genl_order(s, count):
    """(seq, errno or 0 for a reply) of the next @count messages on
    @s: the replies and acks in the order the kernel queued them."""
    out = []
    while len(out) < count:
        data = s.recv(1 << 20)
        off = 0
        while off < len(data):
            length, typ, _, seq, _ = struct.unpack_from("=IHHII", data, off)
            err = 0
            if typ == NLMSG_ERROR:
                err = -struct.unpack_from("=i", data, off + 16)[0]
            out.append((seq, err))
            off += (length + 3) & ~3
    return out


def check_parallel(tap, spec):
    """An hws-get (seq 1) waits up to 10 ms for the odd count, then
    fails with EAGAIN; a dev-get (seq 2) sent on the same socket 3 ms
    into that wait must have its reply queued before the hws-get's
    error. Under the genetlink mutex the dev-get would only run once
    the hws-get returned, so its reply could not come first."""
    values = op_values(spec)
    fid = kernel_family(spec["name"])[4]
    index = nla(attr_values(attr_sets(spec)["dev"])["index"],
                struct.pack("=I", 0))
    trials, first, errors = 5, 0, []
    for _ in range(trials):
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                          NETLINK_GENERIC)
        s.settimeout(5)     # a reply that never comes fails, not hangs
        try:
            waiter = threading.Thread(target=genl_send, args=(
                s, fid, values["hws-get"], NLM_F_ACK, 1, index))
            waiter.start()
            time.sleep(0.003)
            genl_send(s, fid, values["dev-get"], NLM_F_ACK, 2, index)
            waiter.join()
            # dev-get: its reply and its ack; hws-get: its error
            got = genl_order(s, 3)
        finally:
            s.close()
        if (1, errno.EAGAIN) not in got:
            errors.append(f"hws-get did not fail with EAGAIN: {got}")
        elif got[0] == (2, 0):
            first += 1
    if not first:
        errors.append(f"in none of {trials} tries was dev-get answered "
                      "while hws-get waited")
    print(f"# dev-get answered first in {first} of {trials} tries")
    tap.check("dev-get is answered while hws-get waits for the AICPU",
              errors)


def main():
    modes = ("header", "kernel", "parallel")
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print("usage: pto_nlspec.py header|kernel|parallel",
              file=sys.stderr)
        return 2
    tap = Tap()
    spec = load_spec()
    if sys.argv[1] == "header":
        check_schema(tap, spec)
        check_header(tap, spec)
    elif sys.argv[1] == "kernel":
        check_kernel(tap, spec)
    else:
        check_parallel(tap, spec)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())

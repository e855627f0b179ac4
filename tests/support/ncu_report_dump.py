#!/usr/bin/env python3
"""Dumps a report file as NVIDIA's own reader sees it, as JSON, for tests/it/report_file/ncu_report.rs.

Usage: ncu_report_dump.py REPORT.ncu-rep[.gz] > dump.json   (needs `pip install ncu-report`)

Per result, in file order: the kernel's three names, every metric (name -> [kind, value]), the
NVTX push/pop ranges per domain that ncu_report gives for the result (those of the thread that launched
it), the start/end ranges, and the rule results that carry a message.
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

import ncu_report


def kind_name(metric):
    kinds = {
        metric.ValueKind_STRING: "string",
        metric.ValueKind_FLOAT: "float",
        metric.ValueKind_DOUBLE: "double",
        metric.ValueKind_UINT32: "uint32",
        metric.ValueKind_UINT64: "uint64",
    }
    return kinds.get(metric.kind(), "other")


def metrics(action):
    out = {}
    for name in action.metric_names():
        m = action.metric_by_name(name)
        if m is None or not m.has_value():
            continue
        out[name] = [kind_name(m), m.value()]
    return out


def nvtx(action):
    state = action.nvtx_state()
    push_pop, start_end = {}, []
    if state is None:
        return push_pop, start_end
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        names = list(domain.push_pop_ranges())
        if names:
            push_pop[domain.name()] = names
        # ncu_report gives start/end ranges by position and name, without their ids.
        for index in range(len(domain.start_end_ranges())):
            start_end.append([domain.name(), domain.start_end_range(index).name()])
    return push_pop, start_end


def rules(action):
    out = []
    for r in action.rule_results_as_dicts():
        msg = r.get("rule_message")
        if not msg:
            continue
        speedup = r.get("speedup_estimation")
        out.append({
            "identifier": r["rule_identifier"],
            "message": msg["message"],
            "speedup": speedup["speedup"] if speedup else None,
        })
    return out


def dump(path):
    ctx = ncu_report.load_report(path)
    results = []
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            a = rng.action_by_idx(ai)
            push_pop, start_end = nvtx(a)
            results.append({
                "workload": "range" if a.workload_type() == a.WorkloadType_RANGE else "kernel",
                "demangled": a.name(a.NameBase_DEMANGLED),
                "function": a.name(a.NameBase_FUNCTION),
                "mangled": a.name(a.NameBase_MANGLED),
                "metrics": metrics(a),
                "push_pop": push_pop,
                "start_end": start_end,
                "rules": rules(a),
            })
    return results


def main():
    path = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        if path.endswith(".gz"):
            plain = os.path.join(tmp, os.path.basename(path)[:-3])
            with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
            path = plain
        json.dump(dump(path), sys.stdout)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Checks docs/grafana-dashboard.json: valid JSON, a dashboard with panels, and every metric its
queries use documented in docs/metrics.md.

Usage: check-grafana-dashboard.py DASHBOARD.json METRICS.md
"""
import json
import re
import sys


def queries(node):
    """Every PromQL text in the dashboard: panel targets and variable queries."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str):
                yield value
            else:
                yield from queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item)


def main():
    dashboard_path, doc_path = sys.argv[1], sys.argv[2]
    try:
        with open(dashboard_path, encoding="utf-8") as f:
            dashboard = json.load(f)
    except ValueError as e:
        print(f"{dashboard_path}: not valid JSON: {e}")
        return 1
    with open(doc_path, encoding="utf-8") as f:
        documented = set(re.findall(r"`((?:regatta|process)_[a-z0-9_]+)`", f.read()))
    errors = []
    if not dashboard.get("title") or not dashboard.get("panels"):
        errors.append("the dashboard has no title or no panels")
    used = set()
    for expr in queries(dashboard):
        for name in re.findall(r"\b((?:regatta|process)_[a-z0-9_]+)", expr):
            used.add(re.sub(r"_(bucket|count|sum)$", "", name))
    if not used:
        errors.append("no query uses a Regatta metric")
    for name in sorted(used - documented):
        errors.append(f"{name} is used by the dashboard but not documented in {doc_path}")
    for panel in dashboard.get("panels", []):
        if panel.get("type") != "row" and not panel.get("targets"):
            errors.append(f"panel {panel.get('title')!r} has no query")
    for e in errors:
        print(e)
    if not errors:
        print(f"ok: {len(dashboard['panels'])} panels, {len(used)} metrics, all documented")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

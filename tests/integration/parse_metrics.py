#!/usr/bin/python3
"""Parses a Prometheus text exposition with the official client's parser.

Usage: parse_metrics.py FILE

Prints one JSON object: {"families": {name: type}, "samples": [[name, {labels}, value], ...]}.
Exits 2 if the module is missing, 1 if the text does not parse.
"""
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("prometheus_client is not installed (Debian: python3-prometheus-client)",
          file=sys.stderr)
    sys.exit(2)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    families = {}
    samples = []
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = family.type
            for s in family.samples:
                value = s.value
                if math.isinf(value) or math.isnan(value):
                    value = str(value)
                samples.append([s.name, dict(s.labels), value])
    except Exception as e:  # the parser raises ValueError and others on bad input
        print(f"cannot parse the exposition: {e}", file=sys.stderr)
        sys.exit(1)
    json.dump({"families": families, "samples": samples}, sys.stdout)


if __name__ == "__main__":
    main()

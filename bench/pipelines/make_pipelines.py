#!/usr/bin/env python3
"""Writes the benchmark pipelines as kfp IR (JSON), shaped like what the kfp 2.x SDK compiles.

  fanout.json  ParallelFor over N items (no parallelism limit); each step writes one output
               parameter from a shell one-liner (like Snakemake's `touch {output}`).
  chain.json   C steps in a line; step i reads step i-1's output.

Every step takes the root parameter `salt`, so a new salt makes every fingerprint new (a cold
run) and the same salt again finds everything in the cache.
With "bare" as the fourth argument the steps have no outputs (the chain is ordered by
dependentTasks and each step gets its index): for executors that run no process, such as the
simulated one, where only the orchestration is measured. A fifth argument, seconds, makes every
step sleep that long first (orchestration measured while the machine is otherwise idle).
Usage: make_pipelines.py OUT_DIR [N] [C] [bare|files] [SLEEP_SECONDS]
"""
import json
import os
import sys

out_dir = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
c = int(sys.argv[3]) if len(sys.argv) > 3 else 100
bare = len(sys.argv) > 4 and sys.argv[4] == "bare"
sleep = sys.argv[5] if len(sys.argv) > 5 and float(sys.argv[5]) > 0 else ""

# Appends a dot, so each chain step's input differs from the one before (no step of a cold run
# can hit another's cache entry).
STEP_ARGS = ['echo -n "$0." > "$1"', "{{$.inputs.parameters['x']}}",
             "{{$.outputs.parameters['Output'].output_file}}"]


def step_component():
    component = {
        "executorLabel": "exec-step",
        "inputDefinitions": {"parameters": {"x": {"parameterType": "STRING"},
                                            "salt": {"parameterType": "STRING"}}},
    }
    if not bare:
        component["outputDefinitions"] = {"parameters": {"Output": {"parameterType": "STRING"}}}
    return component


def executors():
    args = ["true", "{{$.inputs.parameters['x']}}"] if bare else list(STEP_ARGS)
    if sleep and not bare:
        args[0] = f"sleep {sleep}; " + args[0]
    return {"executors": {"exec-step": {"container": {
        "image": "alpine:3.20", "command": ["sh", "-c"], "args": args}}}}


def root_inputs():
    return {"parameters": {"salt": {"parameterType": "STRING", "defaultValue": "0",
                                    "isOptional": True}}}


fanout = {
    "pipelineInfo": {"name": "bench-fanout"},
    "schemaVersion": "2.1.0",
    "sdkVersion": "kfp-2.13.0",
    "deploymentSpec": executors(),
    "components": {
        "comp-step": step_component(),
        "comp-for-loop-1": {
            "dag": {"tasks": {"step": {
                "taskInfo": {"name": "step"},
                "componentRef": {"name": "comp-step"},
                "cachingOptions": {"enableCache": True},
                "inputs": {"parameters": {
                    "x": {"componentInputParameter": "pipelinechannel--loop-item-param-1"},
                    "salt": {"componentInputParameter": "pipelinechannel--salt"}}}}}},
            "inputDefinitions": {"parameters": {
                "pipelinechannel--loop-item-param-1": {"parameterType": "STRING"},
                "pipelinechannel--salt": {"parameterType": "STRING"}}},
        },
    },
    "root": {
        "inputDefinitions": root_inputs(),
        "dag": {"tasks": {"for-loop-1": {
            "taskInfo": {"name": "for-loop-1"},
            "componentRef": {"name": "comp-for-loop-1"},
            "parameterIterator": {"itemInput": "pipelinechannel--loop-item-param-1",
                                  "items": {"raw": json.dumps([str(i) for i in range(n)])}},
            "inputs": {"parameters": {"pipelinechannel--salt": {
                "componentInputParameter": "salt"}}}}}},
    },
}

chain_tasks = {}
for i in range(c):
    x = ({"runtimeValue": {"constant": f"step-{i}"}} if i == 0 or bare else
         {"taskOutputParameter": {"producerTask": f"step-{i - 1}", "outputParameterKey": "Output"}})
    task = {"taskInfo": {"name": f"step-{i}"}, "componentRef": {"name": "comp-step"},
            "cachingOptions": {"enableCache": True},
            "inputs": {"parameters": {"x": x, "salt": {"componentInputParameter": "salt"}}}}
    if i > 0:
        task["dependentTasks"] = [f"step-{i - 1}"]
    chain_tasks[f"step-{i}"] = task

chain = {
    "pipelineInfo": {"name": "bench-chain"},
    "schemaVersion": "2.1.0",
    "sdkVersion": "kfp-2.13.0",
    "deploymentSpec": executors(),
    "components": {"comp-step": step_component()},
    "root": {"inputDefinitions": root_inputs(), "dag": {"tasks": chain_tasks}},
}

os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "fanout.json"), "w") as f:
    json.dump(fanout, f)
with open(os.path.join(out_dir, "chain.json"), "w") as f:
    json.dump(chain, f)

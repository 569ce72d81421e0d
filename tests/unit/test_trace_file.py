"""load_trace on files that are not a saved timeline: one ValueError naming the file and what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ts_explore.model.trace_file import TraceFileError, load_trace

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
SAVED = json.loads((RESULTS / "pipelined_copy.h200.trace.json").read_text())


def _first_step(doc: dict) -> dict:
    return next(e for e in doc["traceEvents"] if e.get("ph") == "X" and "step" in e.get("args", {}))


def _edited(change) -> dict:
    doc = json.loads(json.dumps(SAVED))
    change(doc)
    return doc


CASES = {
    "a list": ([1, 2, 3], "not a Chrome trace-event document"),
    "traceEvents not a list": ({"traceEvents": 3}, "no 'traceEvents' list"),
    "an event that is a string": ({"traceEvents": ["X"]}, r"traceEvents\[0\] is str, not an event object"),
    "a missing task": (_edited(lambda d: _first_step(d)["args"].pop("task")), r"traceEvents\[\d+\] \(.*\) has no "
                                                                               "args.task"),
    "a stage no version wrote": (_edited(lambda d: _first_step(d)["args"].update(stage="Teleport")),
                                 "args.stage is 'Teleport', not a Stage value"),
    "a start that is text": (_edited(lambda d: _first_step(d)["args"].update(start_ns="soon")),
                             "args.start_ns is 'soon', not a whole number"),
    "a spec of another version": (_edited(lambda d: d["otherData"]["spec"].update(colour="red")),
                                  "otherData.spec is not a trace spec"),
    "malformed tasks": (_edited(lambda d: d["otherData"].update(tasks=[["load"]])), "malformed tasks"),
    "no step events": ({"traceEvents": [{"ph": "M", "name": "process_name"}]}, "no ts-explore step events"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_document_of_another_schema_is_refused_naming_the_file_and_the_fault(case: str, tmp_path: Path) -> None:
    doc, fault = CASES[case]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceFileError, match=fault) as err:
        load_trace(path)
    assert str(err.value).startswith(f"{path}: ") and "Timeline.save" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_a_binary_file_or_a_folder_is_refused_naming_it(tmp_path: Path) -> None:
    png = tmp_path / "picture.json"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(TraceFileError, match=rf"^{png} is not a text file \(byte 0 is not UTF-8\)"):
        load_trace(png)
    with pytest.raises(TraceFileError, match="is a folder"):
        load_trace(tmp_path)


def test_a_saved_trace_still_reads_back(tmp_path: Path) -> None:
    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    assert load_trace(timeline.save(tmp_path / "again.json")) == timeline and timeline.events

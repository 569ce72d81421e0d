"""verify from several threads at once (as the explorer's background proofs and repairs run it) leaves
sys.stdout, sys.stderr and the warnings filters as they were, and each verdict keeps its own TS printout."""

from __future__ import annotations

import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

from ts_explore import gallery
from ts_explore.scenarios import get
from ts_explore.verification.verify import verify


def _verify_one(i: int) -> tuple[bool, str, tuple[str, ...]]:
    if i % 2:
        v = verify(**gallery.get("cross_wait").broken())
    else:
        sc = get("guards_demo")
        v = verify(**sc.build(sc.config()).verify_kwargs())
    return v.ok, v.raw_output, tuple(str(n) for n in v.warnings)


def test_verify_from_four_threads_keeps_the_process_streams_and_filters() -> None:
    stdout, stderr, filters, hook = sys.stdout, sys.stderr, list(warnings.filters), warnings.showwarning
    alone = {i: _verify_one(i) for i in (0, 1)}  # what each verdict says when nothing else runs
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(_verify_one, range(200)))
    assert sys.stdout is stdout and sys.stderr is stderr
    assert warnings.filters == filters and warnings.showwarning is hook
    for i, got in enumerate(results):
        assert got == alone[i % 2], f"call {i} lost or mixed its TS printout"
    assert alone[0][0] and not alone[1][0]


def test_a_capturing_thread_hides_only_its_own_output(capsys) -> None:
    from ts_explore.reader.capture import captured_output, recorded_warnings

    started, release = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def capturing() -> None:
        with captured_output() as out, recorded_warnings() as caught:
            print("inside")
            warnings.warn("mine")
            warnings.warn("mine")  # a repeat is recorded too
            started.set()
            release.wait(10)
        seen["out"], seen["caught"] = out.getvalue(), [str(w.message) for w in caught]

    worker = threading.Thread(target=capturing)
    worker.start()
    started.wait(10)
    print("outside")  # another thread prints while the capture runs
    with warnings.catch_warnings(record=True) as other:
        warnings.simplefilter("always")
        warnings.warn("theirs")
    release.set()
    worker.join(10)
    assert seen == {"out": "inside\n", "caught": ["mine", "mine"]}
    assert capsys.readouterr().out == "outside\n"
    assert [str(w.message) for w in other] == ["theirs"]


def test_other_threads_see_the_real_streams_attributes_while_a_capture_runs() -> None:
    from ts_explore.reader.capture import captured_output

    stream = sys.stdout
    with captured_output():
        assert sys.stdout is not stream and sys.stdout.encoding == stream.encoding
        assert sys.stdout.errors == stream.errors
    assert sys.stdout is stream

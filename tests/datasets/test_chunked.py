"""Tests of pydpowl.datasets.chunked: npy-chunk and zarr round trips, and CSV files read chunk by chunk
coded exactly as one CSV in memory (values, notes, messages), fitted to the same release."""

import numpy as np
import pandas as pd
import pytest

from pydpowl import DPOWL
from pydpowl.datasets import make_synthetic_owl
from pydpowl.datasets.chunked import (ChunkedOWLData, csv_files, open_npy_chunks, open_zarr, read_csv_chunks,
                                      write_npy_chunks, write_zarr)
from pydpowl.datasets.tabular import owl_data_from_frame, read_table

pytestmark = pytest.mark.usefixtures("dask_client")


def _chunks(sizes, seed=0):
    rng = np.random.default_rng(seed)
    for k in sizes:
        yield {"X": rng.uniform(size=(k, 3)), "treatment": np.where(rng.uniform(size=k) < 0.5, 1.0, -1.0)}


def test_npy_chunks_round_trip(tmp_path):
    sizes = (100, 100, 37)
    write_npy_chunks(tmp_path / "d", _chunks(sizes))
    arrays = open_npy_chunks(tmp_path / "d")
    assert sorted(arrays) == ["X", "treatment"]
    assert arrays["X"].chunks == (sizes, (3,)) and arrays["treatment"].chunks == (sizes,)
    expected = list(_chunks(sizes))
    np.testing.assert_array_equal(arrays["X"].compute(), np.vstack([c["X"] for c in expected]))
    np.testing.assert_array_equal(arrays["treatment"].compute(), np.concatenate([c["treatment"] for c in expected]))


def test_npy_chunks_are_written_in_c_order_and_fortran_files_are_read(tmp_path):
    X = np.asfortranarray(np.arange(12.0).reshape(4, 3))  # as DataFrame.to_numpy() often returns
    write_npy_chunks(tmp_path / "d", [{"X": X, "y": np.ones(4)}, {"X": X[:2], "y": np.ones(2)}])
    with open(tmp_path / "d" / "X" / "000000.npy", "rb") as fh:
        np.lib.format.read_magic(fh)
        assert np.lib.format.read_array_header_1_0(fh)[1] is False  # fortran_order
    arrays = open_npy_chunks(tmp_path / "d")
    np.testing.assert_array_equal(arrays["X"].compute(), np.vstack([X, X[:2]]))
    np.save(tmp_path / "d" / "X" / "000001.npy", np.asfortranarray(X[:2] + 1))  # a file written by someone else
    np.testing.assert_array_equal(open_npy_chunks(tmp_path / "d")["X"].compute(), np.vstack([X, X[:2] + 1]))


def test_npy_layout_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        open_npy_chunks(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no subdirectory"):
        open_npy_chunks(tmp_path / "empty")
    with pytest.raises(ValueError, match="different numbers of rows"):
        write_npy_chunks(tmp_path / "bad", [{"X": np.ones((3, 2)), "y": np.ones(4)}])
    with pytest.raises(ValueError, match="chunk 1 holds"):
        write_npy_chunks(tmp_path / "bad2", [{"X": np.ones((3, 2))}, {"Y": np.ones((3, 2))}])
    write_npy_chunks(tmp_path / "d", _chunks((10, 10)))
    np.save(tmp_path / "d" / "treatment" / "000001.npy", np.ones(9))
    with pytest.raises(ValueError, match="chunk 1 of X has 10 rows, of treatment 9|chunk 1 of treatment has 9 rows"):
        open_npy_chunks(tmp_path / "d")


def test_zarr_round_trip(tmp_path):
    sizes = (64, 64, 10)
    write_zarr(tmp_path / "s.zarr", _chunks(sizes, seed=1), chunk_rows=50)
    arrays = open_zarr(tmp_path / "s.zarr")
    expected = list(_chunks(sizes, seed=1))
    np.testing.assert_array_equal(arrays["X"].compute(), np.vstack([c["X"] for c in expected]))
    assert arrays["X"].chunks[0] == (50, 50, 38)
    with pytest.raises(FileNotFoundError):
        open_zarr(tmp_path / "none.zarr")


OPTS = dict(treatment="arm", benefit="B", features=["x1", "x2", "x3", "x4"],
            bounds="x1=0:1,x2=0:1,x3=0:1,x4=0:1", weights_upper_bound=30.0)


def _frame(n=1200, seed=3):
    d = make_synthetic_owl(n, random_state=seed, shift=None)
    frame = d.X.copy()
    frame["arm"] = np.where(d.treatment > 0, "new", "old")
    frame["B"] = d.benefit
    frame["ps"] = np.clip(0.5 + 0.2 * (d.X["x1"] - 0.5), 0.05, 0.95)
    return frame


def _write(frame, directory, pieces=3):
    directory.mkdir(exist_ok=True)
    for k, part in enumerate(np.array_split(np.arange(len(frame)), pieces)):
        frame.iloc[part].to_csv(directory / f"part{k}.csv", index=False)
    return str(directory / "*.csv")


@pytest.mark.parametrize("opts", [dict(treated="new", benefit_lower_bound=-12.0),
                                  dict(treated="old", propensity="column:ps", benefit_lower_bound=-12.0,
                                       weight_sensitivity=0.0)])
def test_csv_chunks_are_coded_like_one_csv(tmp_path, opts):
    frame = _frame()
    pattern = _write(frame, tmp_path / "csv")
    frame.to_csv(tmp_path / "all.csv", index=False)  # the same table as one CSV, read as pydpowl fit reads it
    mem = owl_data_from_frame(read_table(tmp_path / "all.csv"), **OPTS, **opts, source="src")
    data = read_csv_chunks(pattern, **OPTS, **opts, source="src", blocksize=None)
    assert isinstance(data, ChunkedOWLData) and data.n == mem.n and data.X.numblocks[0] == 3
    np.testing.assert_array_equal(data.X.compute(), mem.X.to_numpy())
    for name in ("treatment", "benefit", "propensity"):
        np.testing.assert_array_equal(getattr(data, name).compute(), getattr(mem, name))
    assert data.notes == mem.notes
    assert data.description == mem.description + ", 3 file(s)"
    assert data.diagnostics == mem.diagnostics  # the same counts, printed on request only
    assert data.feature_names == tuple(OPTS["features"])
    assert data.weight_sensitivity == mem.weight_sensitivity == 0.0  # a trial's P(+1), or the stated C
    kw = dict(epsilon=1.0, gamma=10.0, weights_upper_bound=30.0, feature_bounds=mem.feature_bounds,
              weight_sensitivity=mem.weight_sensitivity)
    ref = DPOWL(**kw, random_state=2).fit(mem.X, mem.treatment, mem.benefit, mem.propensity)
    got = DPOWL(**kw, random_state=2).fit(data.X, data.treatment, data.benefit, data.propensity)
    assert np.linalg.norm(got.scaled_coef_ - ref.scaled_coef_) <= 1e-9 * np.linalg.norm(ref.scaled_coef_)


def test_numeric_treatment_and_one_arm_files(tmp_path):
    frame = _frame(900, seed=4).sort_values("arm")  # the first file holds only "new", the last only "old"
    frame["arm"] = np.where(frame["arm"] == "new", 1, 0)
    pattern = _write(frame, tmp_path / "csv")
    frame.to_csv(tmp_path / "all.csv", index=False)
    mem = owl_data_from_frame(read_table(tmp_path / "all.csv"), **OPTS, benefit_lower_bound=-12.0)
    data = read_csv_chunks(pattern, **OPTS, benefit_lower_bound=-12.0)
    np.testing.assert_array_equal(data.treatment.compute(), mem.treatment)
    assert data.treatment_labels == ("1", "0")


def _csv_message(frame, tmp_path, **opts):
    with pytest.raises(ValueError) as mem:
        owl_data_from_frame(frame, **OPTS, **opts, source="src")
    with pytest.raises(ValueError) as chunked:
        read_csv_chunks(_write(frame, tmp_path / "bad"), **OPTS, **opts, source="src")
    return str(chunked.value), str(mem.value)


@pytest.mark.parametrize("case", ["missing value", "text feature", "infinite feature", "three arms",
                                  "treated absent", "propensity outside", "text benefit", "missing column"])
def test_csv_errors_are_the_in_memory_errors(tmp_path, case):
    frame = _frame(300).astype({"x2": object, "B": object})
    opts = dict(treated="new")
    if case == "missing value":
        frame.loc[250, "x3"] = np.nan
    elif case == "text feature":
        frame.loc[10, "x2"] = "high"
    elif case == "infinite feature":
        frame.loc[290, "x1"] = np.inf
    elif case == "three arms":
        frame.loc[5, "arm"] = "other"
    elif case == "treated absent":
        opts = dict(treated="placebo")
    elif case == "propensity outside":
        frame.loc[100, "ps"] = 1.0
        opts = dict(treated="new", propensity="column:ps")
    elif case == "text benefit":
        frame.loc[1, "B"] = "n/a?"
    elif case == "missing column":
        frame = frame.drop(columns="x4")
    got, expected = _csv_message(frame, tmp_path, **opts)
    assert got == expected


def test_csv_files_and_headers(tmp_path):
    with pytest.raises(FileNotFoundError, match="no data file matches"):
        csv_files(tmp_path / "*.csv")
    path = tmp_path / "one.csv"
    _frame(50).to_csv(path, index=False)
    assert csv_files(path) == [str(path)]
    data = read_csv_chunks(path, **OPTS, treated="new", benefit_lower_bound=-12.0)
    assert data.n == 50 and "1 file(s)" in data.description
    assert isinstance(pd.Series(data.notes), pd.Series)


def test_each_csv_chunk_is_parsed_once_per_pass(tmp_path, monkeypatch):
    import dask

    from pydpowl.datasets import chunked
    from pydpowl.engine.dask_problem import track_passes

    calls = []
    real = chunked._csv_arrays
    monkeypatch.setattr(chunked, "_csv_arrays", lambda *a: calls.append(1) or real(*a))
    # Dask's synchronous scheduler runs each task of a graph exactly once (a distributed scheduler may rerun
    # a task, e.g. when it moves work between workers), so the count checks the graphs
    with dask.config.set({"pydpowl.persist": False, "scheduler": "sync"}):  # every pass reads the files
        data = read_csv_chunks(_write(_frame(900), tmp_path / "csv"), **OPTS, treated="new",
                               benefit_lower_bound=-12.0, blocksize=None)
        with track_passes() as log:
            DPOWL(epsilon=1.0, gamma=10.0, weights_upper_bound=30.0, feature_bounds=data.feature_bounds,
                  weight_sensitivity=data.weight_sensitivity, random_state=1).fit(data.X, data.treatment,
                                                                                  data.benefit, data.propensity)
    assert len(calls) == 3 * log.total  # 3 chunks, once per pass: X, treatment, benefit, propensity from one parse


def test_each_block_is_read_and_parsed_once_when_persisted(tmp_path, monkeypatch):
    import dask
    import dask.bytes.core

    reads = []
    real = dask.bytes.core.read_block_from_file
    monkeypatch.setattr(dask.bytes.core, "read_block_from_file", lambda *a, **k: reads.append(1) or real(*a, **k))
    # the synchronous scheduler runs each task of a graph once; persisted, the fit reads the parsed blocks
    with dask.config.set({"pydpowl.persist": True, "scheduler": "sync"}):
        data = read_csv_chunks(_write(_frame(900), tmp_path / "csv"), **OPTS, treated="new",
                               benefit_lower_bound=-12.0, blocksize=None)
        DPOWL(epsilon=1.0, gamma=10.0, weights_upper_bound=30.0, feature_bounds=data.feature_bounds,
              weight_sensitivity=data.weight_sensitivity, random_state=1).fit(data.X, data.treatment, data.benefit,
                                                                              data.propensity)
    assert len(reads) == 3  # 3 files, one block each: read once, by the reader's pass


def test_blocks_within_files_with_a_byte_order_mark_and_crlf_lines(tmp_path):
    frame = _frame(700, seed=8)
    directory = tmp_path / "csv"
    directory.mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(frame)), 2)):
        text = frame.iloc[part].to_csv(index=False, lineterminator="\r\n")
        (directory / f"part{k}.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    frame.to_csv(tmp_path / "all.csv", index=False)
    mem = owl_data_from_frame(read_table(tmp_path / "all.csv"), **OPTS, treated="new", benefit_lower_bound=-12.0)
    data = read_csv_chunks(str(directory / "*.csv"), **OPTS, treated="new", benefit_lower_bound=-12.0,
                           blocksize=4000)
    assert data.X.numblocks[0] > 10  # many blocks per file; the header is given to every block after the first
    np.testing.assert_array_equal(data.X.compute(), mem.X.to_numpy())
    for name in ("treatment", "benefit", "propensity"):
        np.testing.assert_array_equal(getattr(data, name).compute(), getattr(mem, name))
    assert data.notes == mem.notes


def test_a_file_that_is_not_csv_is_named(tmp_path):
    pattern = _write(_frame(300), tmp_path / "csv")
    with open(tmp_path / "csv" / "part1.csv", "a") as fh:
        fh.write('0.5,0.5,0.5,0.5,new,"1\n')  # a quote that is never closed
    with pytest.raises(ValueError, match=r"could not read part1.csv as CSV: Error tokenizing data"):
        read_csv_chunks(pattern, **OPTS, treated="new", benefit_lower_bound=-12.0)
    (tmp_path / "csv" / "part2.csv").write_text("x1,x2\n1,2\n")
    with pytest.raises(ValueError, match=r"src \(part2.csv\): missing column\(s\) \['arm', 'B', 'x3', 'x4'\]"):
        read_csv_chunks(pattern, **OPTS, treated="new", source="src")

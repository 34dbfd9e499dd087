"""Results files as the scripts read them: plain, or stored compressed (results.json.xz, as the
committed baselines are; results.json.gz, as a CI artifact may come), known by their first bytes
as roofbench's own reader (bench/results.cpp) knows them.

    from results_io import results_file_in, read_json
"""
import gzip
import json
import lzma
import os

NAMES = ("results.json", "results.json.xz", "results.json.gz")


def results_file_in(folder):
    """The run folder's results file, or None; ValueError when it holds two (which is its run's?)."""
    found = [n for n in NAMES if os.path.isfile(os.path.join(folder, n))]
    if len(found) > 1:
        raise ValueError(f"{folder} holds {' and '.join(found)}: which is its run's cannot be told (keep one)")
    return os.path.join(folder, found[0]) if found else None


def read_json(path):
    """The JSON in a file, decompressed first where it is xz or gzip."""
    with open(path, "rb") as f:
        head = f.read(6)
    opener = lzma.open if head == b"\xfd7zXZ\x00" else gzip.open if head[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)

"""Runs after the example tests (the ctest command lists it last): the build
tree's, the prefix's and the wheel's libetrt and shipped plugins are the files
they were before the examples were built and run. Nothing of etrt was rebuilt."""
from conftest import BUILD, INSTALLED, digests, shipped_files


def test_nothing_of_etrt_was_rebuilt_or_changed(build_tree_before, prefix, venv):
    assert digests(shipped_files(BUILD)) == build_tree_before
    assert set(INSTALLED) == {prefix, venv[1]}
    for root, before in INSTALLED.items():
        assert digests(shipped_files(root)) == before, root

"""The sources digest in every program key (aot._sources_digest): memoized in the cache
directory under the source files' stat records, always equal to the hash of their contents."""
import os

import pytest

from omnistage.codegen import aot


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(aot, "_package_dir", lambda: str(root))
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "cache"))
    aot._sources_digest.cache_clear()
    yield root
    aot._sources_digest.cache_clear()


def _digest():
    aot._sources_digest.cache_clear()
    return aot._sources_digest()


def _memos(tmp_path):
    return sorted(n for n in os.listdir(tmp_path / "cache") if n.startswith("sources-"))


def test_the_digest_is_the_contents_hash_and_is_read_back_from_its_memo(package, tmp_path, monkeypatch):
    first = _digest()
    assert first == aot._hash_sources(aot._source_files())
    assert len(_memos(tmp_path)) == 1
    monkeypatch.setattr(aot, "_hash_sources", lambda files: pytest.fail("hashed the files again"))
    assert _digest() == first


def test_an_edit_changes_the_digest_even_keeping_size_and_mtime(package, tmp_path):
    first = _digest()
    path = package / "a.py"
    st = os.stat(path)
    path.write_text("x = 7\n")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p or tar restore it
    second = _digest()
    assert second != first and second == aot._hash_sources(aot._source_files())
    assert len(_memos(tmp_path)) == 2


def test_a_damaged_or_planted_memo_is_not_believed(package, tmp_path):
    first = _digest()
    (name,) = _memos(tmp_path)
    memo = tmp_path / "cache" / name
    raw = memo.read_bytes()
    memo.write_bytes(raw[:-64] + b"0" * 64)  # another digest under the old tag
    assert _digest() == first
    memo.write_bytes(b"0" * 64)  # no tag at all
    assert _digest() == first
    assert memo.read_bytes() == raw  # replaced by the right one


def test_an_unusable_cache_directory_still_gives_the_digest(package, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "file" / "cache"))
    assert _digest() == aot._hash_sources(aot._source_files())

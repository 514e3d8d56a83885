"""The synthetic transcript generator: deterministic, well-formed, shaped like the real fixtures."""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING

import pytest

from bench import generate, profile

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, generate.Manifest]:
    path = tmp_path_factory.mktemp("gen") / "s.jsonl"
    return path, generate.write_transcript(path, 8_000_000, seed=4)


class TestTranscript:
    def test_same_seed_same_bytes(self, tmp_path: Path) -> None:
        """A seed fixes the output byte for byte; another seed changes it."""
        a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
        generate.write_transcript(a, 200_000, seed=9)
        generate.write_transcript(b, 200_000, seed=9)
        generate.write_transcript(c, 200_000, seed=10)
        assert a.read_bytes() == b.read_bytes()
        assert a.read_bytes() != c.read_bytes()

    def test_size_and_manifest(self, sample: tuple[Path, generate.Manifest]) -> None:
        """The file lands within about a call block of the asked size, and the manifest counts it."""
        path, m = sample
        size = path.stat().st_size
        assert abs(size - 8_000_000) < 100_000
        assert m.bytes == size
        assert m.lines == path.read_bytes().count(b"\n")

    def test_manifest_tokens_are_one_sample_per_call(self, sample: tuple[Path, generate.Manifest]) -> None:
        """Summing usage once per message id reproduces the manifest's totals and call count."""
        path, m = sample
        seen: dict[str, dict[str, int]] = {}
        for line in path.read_bytes().splitlines():
            rec = json.loads(line)
            if rec.get("type") == "assistant":
                msg = rec["message"]
                if msg["id"] in seen:
                    assert seen[msg["id"]] == msg["usage"]  # every line of a reply repeats its usage
                seen[msg["id"]] = msg["usage"]
        assert len(seen) == m.calls
        assert sum(u["cache_read_input_tokens"] for u in seen.values()) == m.cacheRead
        assert sum(u["cache_creation_input_tokens"] for u in seen.values()) == m.cacheCreation
        assert sum(u["output_tokens"] for u in seen.values()) == m.output

    def test_shape_follows_the_fixtures(self, sample: tuple[Path, generate.Manifest]) -> None:
        """Lines per call, median line length and the progress share are close to the real sessions."""
        path, _ = sample
        real = profile.load().describe()
        gen = profile.load([path]).describe()
        assert gen["linesPerCall"] == pytest.approx(real["linesPerCall"], rel=0.2)
        assert gen["lineLength"]["p50"] == pytest.approx(real["lineLength"]["p50"], rel=0.25)
        assert gen["lineLength"]["p90"] == pytest.approx(real["lineLength"]["p90"], rel=0.35)

        def progress(d: dict[str, object]) -> float:
            shares = d["kindShare"]
            assert isinstance(shares, dict)
            total: float = sum(v for k, v in shares.items() if k.startswith("progress:"))
            return total

        assert progress(gen) == pytest.approx(progress(real), abs=0.06)

    def test_read_results_and_compactions(self, sample: tuple[Path, generate.Manifest]) -> None:
        """Read results carry toolUseResult.file; compactions write a compact_boundary with preTokens."""
        path, m = sample
        reads, boundaries = 0, []
        for line in path.read_bytes().splitlines():
            rec = json.loads(line)
            tur = rec.get("toolUseResult")
            if isinstance(tur, dict) and "file" in tur:
                f = tur["file"]
                assert f["filePath"].startswith("/home/dev/proj/src/")
                assert f["startLine"] == 1
                assert f["numLines"] == f["content"].count("\n") + 1
                reads += 1
            if rec.get("subtype") == "compact_boundary":
                boundaries.append(rec["compactMetadata"]["preTokens"])
        assert reads > 10
        assert len(boundaries) == m.compactions >= 1
        assert all(b > 100_000 for b in boundaries)

    def test_distinct_reads(self, tmp_path: Path) -> None:
        """With distinct_reads every Read is a path not read before."""
        m = generate.write_transcript(tmp_path / "d.jsonl", 1_000_000, seed=2, distinct_reads=True)
        reads = sum(
            1
            for line in (tmp_path / "d.jsonl").read_bytes().splitlines()
            if b'"filePath"' in line and b'"file":' in line
        )
        assert len(m.readPaths) == reads > 5


class TestCorpus:
    def test_sizes_have_the_asked_distribution(self) -> None:
        """Median near 100 KB, p99 near 5 MB, the largest 90 MB, total 1.2 GB, over 3,000 files."""
        sizes = sorted(generate.corpus_sizes(generate.CorpusSpec()))
        assert len(sizes) == 3000
        assert sizes[-1] == 90_000_000
        assert sum(sizes) == pytest.approx(1.2e9, rel=0.01)
        assert statistics.median(sizes) == pytest.approx(100_000, rel=0.15)
        assert sizes[int(0.99 * len(sizes))] == pytest.approx(5_000_000, rel=0.2)

    def test_layout_and_truth(self, tmp_path: Path) -> None:
        """projects/<proj>/<uuid>.jsonl with subagent files; the manifest's truth sums the files."""
        spec = generate.CorpusSpec(
            files=25, total=600_000, median=15_000, p99=80_000, largest=100_000, projects=3, subagent_share=0.3
        )
        man = generate.write_corpus(tmp_path, spec)
        files = [tmp_path / f for f in man["files"]]
        assert len(files) == 25
        assert all(f.exists() for f in files)
        subs = [f for f in files if f.parent.name == "subagents"]
        assert subs, "some subagent files"
        for f in subs:
            first = json.loads(f.read_bytes().split(b"\n", 1)[0])
            assert first["isSidechain"] is True
            assert (f.parent.parent.with_suffix(".jsonl")).exists()
        assert man["truth"]["bytes"] == sum(f.stat().st_size for f in files)
        again = generate.write_corpus(tmp_path, spec)  # cached: same manifest, files untouched
        assert again == man

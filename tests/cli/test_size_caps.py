"""``[index]`` size caps (docs/configuration.md): what an index run reads, what a read keeps."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "parsers"))
from office_files import make_docx  # noqa: E402

NOTES = {"small.md": "# Small\n\nA short note about the harbour crane schedule.\n"}


def config(kb_dir: Path, body: str) -> Path:
    path = kb_dir.parent / "groove.toml"
    path.write_text(f'kb_path = "{kb_dir}"\n[index]\n{body}\n')
    return path


def test_a_lowered_text_cap_skips_the_file_naming_the_key(kb_dir, run):
    (kb_dir / "big.md").write_text("# Big\n\n" + "crane schedule words " * 200)
    cfg = config(kb_dir, 'max_text_file_size = "1 KiB"')
    result = run("index", "--config", str(cfg), "--json")
    summary = json.loads(result.stdout)
    assert (summary["indexed"], summary["skipped"]) == (1, 1)
    assert "big.md" in result.stderr and "[index] max_text_file_size" in result.stderr


def test_a_raised_cap_is_announced_once_and_a_bad_one_is_refused(kb_dir, run):
    cfg = config(kb_dir, 'max_binary_file_size = "300 MiB"\nmax_text_file_size = "unlimited"')
    result = run("index", "--config", str(cfg), "-q")
    assert result.exit_code == 0
    assert result.stderr.count("max_binary_file_size = 300 MiB is above the built-in") == 1
    assert result.stderr.count("max_text_file_size = unlimited is above the built-in") == 1
    bad = run("index", "--config", str(config(kb_dir, "max_text_file_size = 0")), "-q")
    assert bad.exit_code == 2 and "max_text_file_size" in bad.stderr and '"unlimited"' in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_discovered_config_cannot_move_the_caps(kb_dir, run):
    (kb_dir / "big.md").write_text("# Big\n\n" + "crane schedule words " * 200)
    (kb_dir / "groove.toml").write_text('[index]\nmax_text_file_size = "1 KiB"\n')
    result = run("index", "--kb-path", str(kb_dir), "--json")
    assert json.loads(result.stdout)["skipped"] == 0
    assert "index.max_text_file_size ignored" in result.stderr


def test_the_decompression_budget_binds_the_index_run_but_not_a_read(kb_dir, run):
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    (kb_dir / "report.docx").write_bytes(make_docx([("h1", "Crane report"),
                                                    ("p", "The harbour crane moved 40 boxes.")]))
    parsers = '[parsers]\nenabled = ["md", "docx"]\n'
    tight = kb_dir.parent / "tight.toml"
    tight.write_text(f'kb_path = "{kb_dir}"\n{parsers}[index]\nmax_decompressed_size = "1 KiB"\n')
    result = run("index", "--config", str(tight), "--json")
    assert json.loads(result.stdout)["skipped"] == 1
    assert "[index] max_decompressed_size" in result.stderr
    default = kb_dir.parent / "default.toml"
    default.write_text(f'kb_path = "{kb_dir}"\n{parsers}')
    assert run("index", "--config", str(default), "-q").exit_code == 0  # built-in budget
    kb = KnowledgeBase(load_config(config_path=tight))
    try:
        assert "40 boxes" in kb.read_document("report.docx").text
    finally:
        kb.close()


def test_doctor_reports_a_document_larger_than_a_read_returns(kb_dir, run):
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    with sqlite3.connect(kb_dir / ".groove.db") as conn:  # as if indexed under a raised cap
        conn.execute("UPDATE documents SET size = ? WHERE path = 'small.md'", (60 * 1024 * 1024,))
    data = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    found = [f for f in data["findings"] if f.get("path") == "small.md"]
    assert any("larger than a read returns" in f["message"] for f in found)


def test_non_ascii_digits_are_refused_and_accepted_is_said_once(kb_dir, run):
    for value in ('"٣ MB"', '"３ MB"', '"3 \u212aB"'):  # Arabic-Indic 3, fullwidth 3, Kelvin K
        bad = run("index", "--config", str(config(kb_dir, f"max_text_file_size = {value}")),
                  "-q")
        assert bad.exit_code == 2, (value, bad.stderr)
        assert "is not a size" in bad.stderr and bad.stderr.count("accepted:") == 1

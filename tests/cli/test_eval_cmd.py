"""``groove eval`` from the shell: each warning about the golden set is printed once."""

from __future__ import annotations

NOTES = {
    "a.md": "# Harbour\n\nWhen does the harbour crane get inspected? And who replaces the "
            "crane cables? Both are answered in the yard handbook, every spring.\n",
    "b.md": "# Bakery\n\nThe bakery opens at six and sells sourdough until it runs out.\n",
    ".groove-eval.yml": "queries:\n"
                        "  - {id: one, query: 'when does the harbour crane get inspected',"
                        " expected: [{path: a.md}]}\n"
                        "  - {id: two, query: 'who replaces the crane cables',"
                        " expected: [{path: a.md}]}\n",
}
INDEXED = True


def test_the_quoted_golden_warning_is_printed_once(kb_dir, run):
    result = run("eval", "--kb-path", str(kb_dir), "--no-history")
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "quotes 2 golden queries" in line]
    assert lines == ["warning: a.md quotes 2 golden queries verbatim (ids one, two); "
                     "paraphrase them so eval measures retrieval"]

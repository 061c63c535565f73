"""The manual in docs/ and the README keep up with the code.

Each test derives its list from the code itself (the config model, the click
command tree, the MCP server's own listings, the package tree), so a new key,
command, option, tool, prompt, resource template or package fails here until
it is documented, and a renamed heading fails until the links follow it.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
import unicodedata
from pathlib import Path

import click
import pytest
from mcp import Client
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "groove"

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The Markdown without fenced code blocks (headings and links there are not real)."""
    return _FENCE.sub("", text)


_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)


def _linkable(text: str) -> str:
    """The prose without inline code spans either: a link written inside backticks is an
    example of syntax, not a link."""
    return _CODE_SPAN.sub("", _prose(text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower-case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]{2,}|`", "", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, title in _HEADING.findall(_prose(text)):
        slug = _slug(title)
        n = seen.get(slug, 0)
        out.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return out


def _sections(text: str) -> dict[str, str]:
    """Heading text -> the body up to the next heading of the same or a higher level."""
    prose = _prose(text)
    marks = [(m.start(), len(m.group(1)), m.group(2), m.end()) for m in _HEADING.finditer(prose)]
    out: dict[str, str] = {}
    for i, (_, level, title, body_start) in enumerate(marks):
        end = next((s for s, lvl, _, _ in marks[i + 1:] if lvl <= level), len(prose))
        out[title.strip()] = prose[body_start:end]
    return out


# --- configuration -------------------------------------------------------------------


def _config_keys(model: type[BaseModel], section: str = "") -> list[tuple[str, str]]:
    """``(section, key)`` for every leaf key; nested tables recurse with a dotted section."""
    keys = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _config_keys(annotation, f"{section}.{key}" if section else key)
        else:
            keys.append((section, key))
    return keys


def test_every_config_key_is_documented_in_its_section():
    from groove.config.model import _Settings

    sections = _sections(_read(DOCS / "configuration.md"))
    keys = _config_keys(_Settings)
    assert len(keys) > 30  # the walk found the nested tables
    missing = []
    for section, key in keys:
        heading = f"[{section}]" if section else "Top-level keys"
        body = sections.get(heading)
        if body is None:
            missing.append(f"no '### {heading}' section for {section}.{key}")
        elif f"`{key}`" not in body:
            missing.append(f"{section + '.' if section else ''}{key} (under '{heading}')")
    assert not missing, "docs/configuration.md does not document: " + "; ".join(missing)


def _toml_value(text: str) -> object:
    """A TOML value as Python (so `10` and `10.0` compare equal); the text itself if not TOML."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def test_documented_config_defaults_match_the_code():
    """The default column of every scalar key says what the model's default is."""
    from groove.config.model import _Settings

    sections = _sections(_read(DOCS / "configuration.md"))

    def rows(section: str) -> dict[str, str]:
        body = sections.get(f"[{section}]" if section else "Top-level keys", "")
        return {m.group(1): m.group(2) for m in
                re.finditer(r"^\| `([a-z_]+)` \| ([^|]+) \|", body, re.MULTILINE)}

    def toml(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return f'"{value}"'
        if isinstance(value, list):
            return "[" + ", ".join(toml(v) for v in value) + "]"
        return repr(value)

    wrong = []
    for section, key in _config_keys(_Settings):
        model: type[BaseModel] = _Settings
        for part in filter(None, section.split(".")):
            field = next(f for n, f in model.model_fields.items() if (f.alias or n) == part)
            model = field.annotation  # type: ignore[assignment]
        field = next(f for n, f in model.model_fields.items() if (f.alias or n) == key)
        default = field.get_default(call_default_factory=True)
        documented = rows(section).get(key)
        if default is None or documented is None:
            continue  # "unset" defaults are described in words; a missing row fails above
        shown = re.match(r"\s*`([^`]+)`", documented)
        if shown is None or _toml_value(shown.group(1)) != _toml_value(toml(default)):
            wrong.append(f"{section}.{key}: code {toml(default)}, docs {documented.strip()}")
    assert not wrong, "docs/configuration.md defaults disagree with the code: " + "; ".join(wrong)


# --- command line --------------------------------------------------------------------


def _commands() -> dict[str, click.Command]:
    from groove.cli import cli
    from groove.cli.commands import load_all

    load_all()
    found: dict[str, click.Command] = {}

    def visit(group: click.Group, prefix: str) -> None:
        for name, command in group.commands.items():
            full = f"{prefix}{name}"
            found[full] = command
            if isinstance(command, click.Group):
                visit(command, f"{full} ")

    visit(cli, "")
    return found


def test_every_cli_command_and_option_is_in_the_cli_page():
    text = _read(DOCS / "cli.md")
    sections = _sections(text)
    commands = _commands()
    assert {"index", "search", "serve", "eval"} <= set(commands)
    missing = []
    for name, command in commands.items():
        top = name.split()[0]
        if top not in sections:
            missing.append(f"section '## {top}'")
        elif " " in name and name.split(" ", 1)[1] not in sections[top]:
            missing.append(f"'{name}' in the {top} section")
        for param in command.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt.startswith("--") and opt not in text:
                    missing.append(f"{name} {opt}")
    assert not missing, "docs/cli.md does not mention: " + "; ".join(sorted(set(missing)))


# --- MCP -----------------------------------------------------------------------------


def test_every_mcp_tool_prompt_and_resource_template_is_in_the_mcp_page(tmp_path):
    from groove.config import Config
    from groove.kb import KnowledgeBase
    from groove.server.mcp import build_mcp_server

    kb = KnowledgeBase(Config.defaults_for(tmp_path))

    async def listings():
        async with Client(build_mcp_server(kb)) as client:
            return (await client.list_tools(), await client.list_prompts(),
                    await client.list_resource_templates())

    try:
        tools, prompts, templates = asyncio.run(listings())
    finally:
        kb.close()
    text = _read(DOCS / "mcp.md")
    sections = _sections(text)
    names = [t.name for t in tools.tools] + [p.name for p in prompts.prompts]
    assert "search" in names and "deep_dive" in names
    missing = [f"'### {n}'" for n in names if n not in sections]
    for tool in tools.tools:
        body = sections.get(tool.name, "")
        missing += [f"{tool.name}({arg})" for arg in tool.input_schema.get("properties", {})
                    if f"`{arg}`" not in body]
    for prompt in prompts.prompts:
        body = sections.get(prompt.name, "")
        missing += [f"{prompt.name}({a.name})" for a in prompt.arguments or []
                    if f"`{a.name}`" not in body]
    missing += [t.uri_template for t in templates.resource_templates if t.uri_template not in text]
    assert not missing, "docs/mcp.md does not document: " + "; ".join(missing)


# --- links and the README layout -----------------------------------------------------


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: p.name)
def test_relative_links_resolve(page: Path):
    broken = []
    for target in _LINK.findall(_linkable(_read(page))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, kb: ...
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(_read(dest)):
            broken.append(f"{target} (no such heading in {dest.name})")
    assert not broken, f"{page.relative_to(ROOT)} has broken links: " + "; ".join(broken)


def test_readme_layout_table_matches_the_package_tree():
    readme = _read(ROOT / "README.md")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(src/groove/[^`]+)`", layout))
    packages = {f"src/groove/{p.name}/" for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    modules = {f"src/groove/{p.name}" for p in SRC.glob("*.py") if not p.name.startswith("_")}
    missing = sorted((packages | modules) - listed)
    stale = sorted(p for p in listed if not (ROOT / p).exists())
    assert not missing, f"README layout table lacks: {missing}"
    assert not stale, f"README layout table lists paths that do not exist: {stale}"
    for row in re.findall(r"^\| `([^`]+)` \|", layout, re.MULTILINE):
        assert (ROOT / row).exists(), f"README layout table lists {row}, which does not exist"


def test_every_page_is_on_the_manuals_map_and_in_the_readme():
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    index_links = {t.partition("#")[0] for t in _LINK.findall(_prose(_read(DOCS / "index.md")))}
    readme_links = {t.partition("#")[0] for t in _LINK.findall(_prose(_read(ROOT / "README.md")))}
    assert not pages - index_links, f"docs/index.md does not link {sorted(pages - index_links)}"
    missing = {p for p in pages if f"docs/{p}" not in readme_links}
    assert not missing, f"the README's Documentation section does not link {sorted(missing)}"

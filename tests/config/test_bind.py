"""The bind address is read once and written back the same way (config/bind.py)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.config import BindAddress, parse_bind

ports = st.integers(min_value=1, max_value=65535)
hosts = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.-]{0,30}", fullmatch=True),
)


@given(hosts, ports)
def test_formatting_then_parsing_gives_the_same_address(host: str, port: int) -> None:
    address = BindAddress(host, port)
    assert parse_bind(str(address)) == address


@given(st.ip_addresses(v=6).map(str), ports)
def test_an_ipv6_host_is_written_in_brackets_and_read_without(host: str, port: int) -> None:
    text = str(BindAddress(host, port))
    assert text == f"[{host}]:{port}"
    assert parse_bind(text).host == host


@given(hosts, ports, ports)
def test_with_port_keeps_the_host(host: str, port: int, other: int) -> None:
    address = BindAddress(host, port)
    assert address.with_port(other) == (host, other)
    assert address.with_port(None) == address


@given(st.ip_addresses())
def test_loopback_is_the_ip_rule(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    assert BindAddress(str(ip), 3100).is_loopback == ip.is_loopback


@pytest.mark.parametrize("text", ["localhost:80", "LOCALHOST:80", "127.8.9.1:1", "[::1]:3100"])
def test_loopback_names(text: str) -> None:
    assert parse_bind(text).is_loopback


def test_the_config_hands_out_the_parsed_address(tmp_path) -> None:
    from groove.config import config_from_toml_text

    (tmp_path / "notes").mkdir()
    cfg = config_from_toml_text('[transport.http]\nbind = "[::1]:4100"\n', kb_path=tmp_path / "notes")
    assert cfg.transport.http.address == BindAddress("::1", 4100)
    assert str(cfg.transport.http.address) == cfg.transport.http.bind

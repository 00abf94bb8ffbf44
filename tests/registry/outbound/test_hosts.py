"""registry.outbound.hosts: one host parser and one https rule for every app."""

import pytest

from registry.outbound.hosts import InvalidHost, domain_parse, https_url_problem, url_authority


@pytest.mark.parametrize(
    ("value", "host", "port"),
    [
        ("Example.COM", "example.com", None),
        ("example.com.", "example.com", None),
        ("localhost:8443", "localhost", 8443),
        ("bücher.example", "xn--bcher-kva.example", None),
        ("203.0.113.7:443", "203.0.113.7", 443),
        ("[2001:db8::1]:8443", "2001:db8::1", 8443),
    ],
)
def test_domains_are_normalized_to_idna_host_and_port(value, host, port):
    assert domain_parse(value) == (host, port)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "https://example.com",
        "example.com/agent",
        "user@example.com",
        "exa mple.com",
        "example.com:0",
        "example.com:99999",
        "example.com:https",
        "-bad.example",
        "under_score.example",
        "a" * 64 + ".example",
        "2130706433",
        "2001:db8::1",
        "[not-ipv6]",
    ],
)
def test_malformed_domains_are_refused(value):
    with pytest.raises(InvalidHost, match=r"is required|is not a valid host name"):
        domain_parse(value)


def test_an_idn_is_the_same_host_under_uts46_everywhere():
    # IDNA 2003 (Python's "idna" codec) would map ß to "ss": another host altogether.
    assert domain_parse("straße.de").host == "xn--strae-oqa.de"
    assert domain_parse("STRASSE.de").host == "strasse.de"
    assert domain_parse("Bücher.example:8443").authority == "xn--bcher-kva.example:8443"


@pytest.mark.parametrize(
    ("url", "authority"),
    [
        ("https://Agents.Example.com/a2a", "agents.example.com"),
        ("https://agents.example.com:443/a2a", "agents.example.com"),
        ("https://agents.example.com:8443/a2a", "agents.example.com:8443"),
        ("https://[2001:db8::1]:8443/", "[2001:db8::1]:8443"),
        ("not a url", None),
        ("https://", None),
    ],
)
def test_the_authority_of_a_url(url, authority):
    assert url_authority(url) == authority


@pytest.mark.parametrize(
    ("value", "allow_http", "problem"),
    [
        ("https://agents.example.com/a2a", False, None),
        ("http://agents.example.com/a2a", False, "must be an https URL"),
        ("http://agents.example.com/a2a", True, None),
        ("ftp://agents.example.com/a2a", True, "must be an https URL"),
        ("/a2a", False, "must be an absolute URL"),
        ("https://", False, "must be an absolute URL"),
        ("https://:443/a2a", False, "must be an absolute URL"),
        ("https://agents.example.com:99999/", False, "is not a valid URL"),
        ("https://[::1/", False, "is not a valid URL"),
    ],
)
def test_the_https_rule(value, allow_http, problem):
    assert https_url_problem(value, allow_http=allow_http) == problem

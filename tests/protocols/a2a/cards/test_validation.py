"""card_validate: a2a-sdk's view of a card plus the checks it lacks, every problem by path."""

import copy

import pytest

from protocols.a2a.cards.validation import card_validate
from tests.conftest import BASE_CARD
from tests.protocols.a2a.sample_cards import SNAKE_CARD, V03_CARD, hybrid_card


def paths(report):
    return {p.path for p in report.errors}


def test_a_valid_card_has_no_errors_or_warnings():
    report = card_validate(copy.deepcopy(BASE_CARD))
    assert report.ok
    assert report.spec_version == "1.0"
    assert report.warnings == []


def test_versions_and_spellings_are_told_apart():
    assert card_validate(copy.deepcopy(V03_CARD)).spec_version == "0.3"
    assert card_validate(hybrid_card()).spec_version == "hybrid"
    snake = card_validate(copy.deepcopy(SNAKE_CARD))
    assert (snake.spec_version, snake.naming, snake.ok) == ("1.0", "snake_case", True)


def test_not_a_card_says_so():
    report = card_validate({"name": "x"})
    assert report.spec_version is None
    assert "not an A2A agent card" in report.errors[0].message
    assert card_validate([1]).errors[0].message == "an agent card must be a JSON object"


def test_unknown_members_are_warnings_not_errors():
    card = copy.deepcopy(BASE_CARD)
    card["x-extra"] = {"a": 1}
    card["skills"][0]["x-note"] = "hi"
    report = card_validate(card)
    assert report.ok
    assert {w.path for w in report.warnings} == {"x-extra", "skills[0].x-note"}


def test_snake_case_paths_use_the_cards_own_names():
    card = copy.deepcopy(SNAKE_CARD)
    del card["default_input_modes"]
    card["supported_interfaces"][0]["protocol_version"] = "one"
    assert paths(card_validate(card)) == {
        "default_input_modes",
        "supported_interfaces[0].protocol_version",
    }


def test_both_spellings_of_one_member_are_an_error():
    card = copy.deepcopy(BASE_CARD)
    card["default_input_modes"] = ["text/plain"]
    assert "default_input_modes" in paths(card_validate(card))


def test_type_errors_are_reported_with_required_ones_together():
    card = copy.deepcopy(BASE_CARD)
    card["capabilities"] = {"streaming": "yes", "extensions": [{"uri": 5}]}
    card["skills"][0]["tags"] = "weather"
    del card["version"]
    assert paths(card_validate(card)) == {
        "capabilities.streaming",
        "capabilities.extensions[0].uri",
        "skills[0].tags",
        "version",
    }


def test_two_members_of_a_security_scheme_oneof_are_an_error():
    card = copy.deepcopy(BASE_CARD)
    card["securitySchemes"] = {
        "s": {
            "httpAuthSecurityScheme": {"scheme": "Bearer"},
            "mtlsSecurityScheme": {},
        }
    }
    assert "securitySchemes.s" in paths(card_validate(card))


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("documentationUrl", "http://docs.example.com"),
        ("iconUrl", "/relative/icon.png"),
        ("provider", {"organization": "X", "url": "ftp://x.example"}),
    ],
)
def test_urls_must_be_absolute_https(member, value):
    card = copy.deepcopy(BASE_CARD)
    card[member] = value
    assert not card_validate(card).ok


def test_http_urls_are_accepted_when_the_setting_allows(settings):
    settings.A2A_ALLOW_HTTP_URLS = True
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"][0]["url"] = "http://localhost:9999/a2a"
    assert card_validate(card).ok


def test_grpc_interfaces_may_be_host_and_port():
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"].append(
        {"url": "weather.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    )
    assert card_validate(card).ok


def test_media_types_and_versions_are_checked():
    card = copy.deepcopy(BASE_CARD)
    card["defaultOutputModes"] = ["text"]
    card["supportedInterfaces"][0]["protocolVersion"] = "1.0.0"
    report = card_validate(card)
    assert paths(report) == {"defaultOutputModes[0]"}
    assert "supportedInterfaces[0].protocolVersion" in {w.path for w in report.warnings}


@pytest.mark.parametrize(
    ("path", "value", "limit"),
    [
        (("name",), "n" * 201, 200),
        (("version",), "1." + "0" * 99, 100),
        (("skills", 0, "id"), "i" * 201, 200),
        (("skills", 0, "name"), "n" * 201, 200),
        (("skills", 0, "tags", 1), "t" * 201, 200),
        # 150 characters, but 300 lower-cased: tags are indexed lower-cased.
        (("skills", 0, "tags", 1), "\u0130" * 150, 200),
        (("supportedInterfaces", 0, "url"), "https://weather.example.com/" + "p" * 2021, 2048),
    ],
)
def test_values_longer_than_the_registry_stores_are_errors(path, value, limit):
    card = copy.deepcopy(BASE_CARD)
    parent = card
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    report = card_validate(card)
    where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")
    assert [(p.path, p.message) for p in report.errors] == [
        (where, f"must be at most {limit} characters")
    ]


def test_v03_urls_longer_than_the_registry_stores_are_errors():
    card = copy.deepcopy(V03_CARD)
    card["url"] = "https://weather.example.com/" + "p" * 2021
    assert "url" in paths(card_validate(card))


def test_an_invalid_v03_card_reports_its_own_field_names():
    card = copy.deepcopy(V03_CARD)
    del card["defaultInputModes"]
    card["url"] = "http://translator.example.org/a2a"
    card["skills"][0]["tags"] = "x"
    assert {"defaultInputModes", "url", "skills[0].tags"} <= paths(card_validate(card))


def test_v03_security_must_name_declared_schemes():
    card = copy.deepcopy(V03_CARD)
    card["security"] = [{"oauth": ["read"]}]
    assert "security[0].oauth" in paths(card_validate(card))


def _two_flows() -> dict:
    """A 0.3 OAuth scheme with two flows (1.0 takes one: the first is kept)."""
    return {
        "type": "oauth2",
        "flows": {
            "clientCredentials": {"tokenUrl": "https://auth.example/token", "scopes": {}},
            "authorizationCode": {
                "authorizationUrl": "https://auth.example/authorize",
                "tokenUrl": "https://auth.example/token",
                "scopes": {},
            },
        },
    }


def test_v03_card_with_two_oauth_flows_is_accepted():
    card = copy.deepcopy(V03_CARD)
    card["securitySchemes"]["oauth"] = _two_flows()
    assert card_validate(card).ok


def test_empty_capabilities_object_satisfies_the_required_member():
    card = copy.deepcopy(BASE_CARD)
    card["capabilities"] = {}
    report = card_validate(card)
    assert report.ok, report.errors


def test_empty_required_strings_and_lists_are_still_errors():
    card = copy.deepcopy(BASE_CARD)
    card["name"] = ""
    card["skills"] = []
    assert {"name", "skills"} <= paths(card_validate(card))


def _legacy_v03_card() -> dict:
    """A 0.3 card with every member a2a-sdk's parser rewrites in place: the extended card
    flag, security on the card and on a skill, a scheme's type and ``in``, two OAuth flows."""
    card = copy.deepcopy(V03_CARD)
    card["supportsAuthenticatedExtendedCard"] = True
    card["skills"][0]["security"] = [{"apikey": []}]
    card["securitySchemes"]["oauth"] = _two_flows()
    return card


@pytest.mark.parametrize("dialect", ["1.0", "snake_case", "0.3", "0.3 legacy", "rc", "hybrid"])
def test_the_index_view_leaves_the_card_as_posted(dialect):
    """The index view parses a copy deep only where a2a-sdk's parser writes
    (validation._parse_copy): the card is unchanged, and the view is the one a whole deep
    copy gives."""
    from a2a.client.card_resolver import parse_agent_card
    from google.protobuf.json_format import MessageToDict

    from protocols.a2a.cards.validation import _single_flow, card_index_view
    from tests.protocols.a2a.cards.test_rc_cards import RC_CARD

    card = {
        "1.0": lambda: copy.deepcopy(BASE_CARD),
        "snake_case": lambda: copy.deepcopy(SNAKE_CARD),
        "0.3": lambda: copy.deepcopy(V03_CARD),
        "0.3 legacy": _legacy_v03_card,
        "rc": lambda: copy.deepcopy(RC_CARD),
        "hybrid": hybrid_card,
    }[dialect]()
    posted = copy.deepcopy(card)
    view = card_index_view(card)
    assert card == posted
    if dialect != "rc":  # (an RC card is read in 1.0's names first)
        whole = copy.deepcopy(posted)
        if dialect.startswith("0.3"):
            _single_flow(whole)
        assert view == MessageToDict(parse_agent_card(whole))
    assert card_validate(card).ok
    assert card == posted

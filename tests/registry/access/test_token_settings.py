"""OIDC_ISSUERS is checked at start-up: a bad value stops the registry naming the entry
and member."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from registry.settings.identity import admin_sign_in_check, issuers_read

pytestmark = pytest.mark.database_independent

GOOD = {"issuer": "https://idp.example", "audience": "registry", "owner": "corp:{sub}"}


def test_a_good_entry_is_read_with_its_defaults():
    (issuer,) = issuers_read([GOOD])
    assert issuer["algorithms"] == ("RS256",)
    assert (issuer["groups"], issuer["adminGroups"], issuer["claims"]) == (None, (), {})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"issuer": "http://idp.example"}, "OIDC_ISSUERS[0].issuer must be an https URL"),
        ({"audience": ""}, "OIDC_ISSUERS[0].audience is required"),
        ({"owner": "corp:{sub.__class__}"}, "OIDC_ISSUERS[0].owner may name claims only"),
        ({"owner": "corp:{0}"}, "OIDC_ISSUERS[0].owner may name claims only"),
        ({"owner": "everyone"}, "OIDC_ISSUERS[0].owner must name at least one claim"),
        ({"adminGroups": ["admins"]}, "OIDC_ISSUERS[0].adminGroups needs 'groups'"),
        ({"algorithms": ["HS256"]}, "OIDC_ISSUERS[0].algorithms must list some of"),
        ({"algorithms": ["none"]}, "OIDC_ISSUERS[0].algorithms must list some of"),
        ({"claims": {"ref": "main"}}, "OIDC_ISSUERS[0].claims must map claim names"),
        ({"scope": "admin"}, "OIDC_ISSUERS[0].scope is not a member"),
    ],
)
def test_a_bad_entry_is_refused_naming_its_member(change, message):
    with pytest.raises(ImproperlyConfigured, match=message.replace("[", r"\[").replace("]", r"\]")):
        issuers_read([{**GOOD, **change}])


def test_the_same_issuer_twice_is_refused():
    with pytest.raises(ImproperlyConfigured, match="names an issuer twice"):
        issuers_read([GOOD, GOOD])


def test_not_a_list_is_refused():
    with pytest.raises(ImproperlyConfigured, match="must be a JSON list"):
        issuers_read({"issuer": "https://idp.example"})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (("http://idp.example", "c", ["staff"], [], True), "must be an https URL"),
        (("https://idp.example", "", ["staff"], [], True), "ADMIN_OIDC_CLIENT_ID is required"),
        (("https://idp.example", "c", [], [], True), "nobody could sign in"),
        (("", "", [], [], False), "ADMIN_PASSWORD_LOGIN=0 needs ADMIN_OIDC_ISSUER"),
    ],
)
def test_staff_sign_in_settings_that_would_lock_everyone_out_are_refused(values, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        admin_sign_in_check(*values)


def test_staff_sign_in_settings_that_work_pass():
    admin_sign_in_check("https://idp.example", "client", [], ["root"], False)
    admin_sign_in_check("", "", [], [], True)

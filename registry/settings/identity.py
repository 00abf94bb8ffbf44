"""Identity providers, from the environment (registry/access/tokens.py;
docs/guides/identity-providers.md): the issuers whose tokens act as keys, checked here so a
bad value stops the registry at start-up with its place named."""

import os
import string
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from registry.settings.env import env_bool, env_int, env_json, env_list

# The signature algorithms a token may use: asymmetric ones only, so no key of an issuer
# can ever be taken for an HMAC secret, and never "none".
ASYMMETRIC_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
ISSUER_MEMBERS = {"issuer", "audience", "owner", "groups", "adminGroups", "algorithms", "claims"}


def _fail(index: int, member: str, message: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"OIDC_ISSUERS[{index}].{member} {message}")


def owner_template_fields(template: str) -> list[str]:
    """The claim names an owner template reads (``github:{repository_owner}``); ValueError
    for anything but plain names (no attribute, index or format spec)."""
    fields = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"may name claims only as {{claim}}, not {{{name}}}")
        fields.append(name)
    if not fields:
        raise ValueError("must name at least one claim, as {claim}")
    return fields


def issuers_read(value: object) -> tuple[dict, ...]:
    """OIDC_ISSUERS checked: a list of objects, each with ``issuer`` (an https URL),
    ``audience``, ``owner`` (a claims template), optionally ``groups`` (a claim name),
    ``adminGroups`` (a list), ``algorithms`` (asymmetric ones) and ``claims`` (claim names
    each with the values a token must have one of: ``{"repository_owner": ["my-org"]}``)."""
    if not isinstance(value, list):
        raise ImproperlyConfigured("OIDC_ISSUERS must be a JSON list of objects")
    issuers = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ImproperlyConfigured(f"OIDC_ISSUERS[{index}] must be an object")
        unknown = sorted(set(item) - ISSUER_MEMBERS)
        if unknown:
            raise _fail(index, unknown[0], "is not a member an issuer has")
        for member in ("issuer", "audience", "owner"):
            if not isinstance(item.get(member), str) or not item[member].strip():
                raise _fail(index, member, "is required (a string)")
        parts = urlsplit(item["issuer"])
        if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
            raise _fail(index, "issuer", "must be an https URL")
        try:
            owner_template_fields(item["owner"])
        except ValueError as exc:
            raise _fail(index, "owner", str(exc)) from None
        groups = item.get("groups")
        if groups is not None and (not isinstance(groups, str) or not groups):
            raise _fail(index, "groups", "must name a claim (a string)")
        admin_groups = item.get("adminGroups", [])
        if not isinstance(admin_groups, list) or not all(
            isinstance(g, str) and g for g in admin_groups
        ):
            raise _fail(index, "adminGroups", "must be a list of group names")
        if admin_groups and groups is None:
            raise _fail(index, "adminGroups", "needs 'groups', the claim holding them")
        algorithms = item.get("algorithms", ["RS256"])
        if (
            not isinstance(algorithms, list)
            or not algorithms
            or not set(algorithms) <= set(ASYMMETRIC_ALGORITHMS)
        ):
            raise _fail(
                index, "algorithms", f"must list some of {', '.join(ASYMMETRIC_ALGORITHMS)}"
            )
        claims = item.get("claims", {})
        if not isinstance(claims, dict) or not all(
            isinstance(values, list) and values and all(isinstance(v, str) for v in values)
            for values in claims.values()
        ):
            raise _fail(index, "claims", "must map claim names to lists of accepted values")
        issuers.append(
            {
                "issuer": item["issuer"],
                "audience": item["audience"],
                "owner": item["owner"],
                "groups": groups,
                "adminGroups": tuple(admin_groups),
                "algorithms": tuple(algorithms),
                "claims": {name: tuple(values) for name, values in claims.items()},
            }
        )
    if len({item["issuer"] for item in issuers}) != len(issuers):
        raise ImproperlyConfigured("OIDC_ISSUERS names an issuer twice")
    return tuple(issuers)


OIDC_ISSUERS = issuers_read(env_json("OIDC_ISSUERS", []))
# Clock skew allowed on exp, nbf and iat, in seconds.
OIDC_LEEWAY_SECONDS = env_int("OIDC_LEEWAY_SECONDS", 30)
# A token may live (exp - iat) this long at most, in seconds; 0: any lifetime.
OIDC_TOKEN_MAX_LIFETIME_SECONDS = env_int("OIDC_TOKEN_MAX_LIFETIME_SECONDS", 86400)
# An issuer's discovery document and keys are kept this long in each process, and fetched
# again for a token whose kid they lack at most once every OIDC_KEYS_REFETCH_SECONDS.
OIDC_KEYS_CACHE_SECONDS = env_int("OIDC_KEYS_CACHE_SECONDS", 3600)
OIDC_KEYS_REFETCH_SECONDS = env_int("OIDC_KEYS_REFETCH_SECONDS", 60)

# Staff sign-in to the admin through an identity provider (registry/access/staff.py; the
# authorization code flow with PKCE, by mozilla-django-oidc): the issuer (its discovery
# document gives the endpoints and keys), this registry's client there, the claim of the ID
# token holding the caller's groups and which groups make staff and superusers. Off while
# ADMIN_OIDC_ISSUER is empty. ADMIN_PASSWORD_LOGIN=0 turns the admin's passwords off.
ADMIN_OIDC_ISSUER = os.environ.get("ADMIN_OIDC_ISSUER", "").rstrip("/")
ADMIN_OIDC_CLIENT_ID = os.environ.get("ADMIN_OIDC_CLIENT_ID", "")
ADMIN_OIDC_CLIENT_SECRET = os.environ.get("ADMIN_OIDC_CLIENT_SECRET", "")
ADMIN_OIDC_SCOPES = os.environ.get("ADMIN_OIDC_SCOPES", "") or "openid email profile"
ADMIN_OIDC_GROUPS_CLAIM = os.environ.get("ADMIN_OIDC_GROUPS_CLAIM", "") or "groups"
ADMIN_OIDC_STAFF_GROUPS = env_list("ADMIN_OIDC_STAFF_GROUPS")
ADMIN_OIDC_SUPERUSER_GROUPS = env_list("ADMIN_OIDC_SUPERUSER_GROUPS")
ADMIN_PASSWORD_LOGIN = env_bool("ADMIN_PASSWORD_LOGIN", True)


def admin_sign_in_check(
    issuer: str, client_id: str, staff: list[str], superusers: list[str], passwords: bool
) -> None:
    """The staff sign-in's settings together: refused when nobody could sign in."""
    if issuer:
        parts = urlsplit(issuer)
        if parts.scheme != "https" or not parts.hostname:
            raise ImproperlyConfigured("ADMIN_OIDC_ISSUER must be an https URL")
        if not client_id:
            raise ImproperlyConfigured("ADMIN_OIDC_CLIENT_ID is required with ADMIN_OIDC_ISSUER")
        if not staff and not superusers:
            raise ImproperlyConfigured(
                "ADMIN_OIDC_STAFF_GROUPS or ADMIN_OIDC_SUPERUSER_GROUPS is required with "
                "ADMIN_OIDC_ISSUER: nobody could sign in"
            )
    elif not passwords:
        raise ImproperlyConfigured(
            "ADMIN_PASSWORD_LOGIN=0 needs ADMIN_OIDC_ISSUER: nobody could sign in to the admin"
        )


admin_sign_in_check(
    ADMIN_OIDC_ISSUER,
    ADMIN_OIDC_CLIENT_ID,
    ADMIN_OIDC_STAFF_GROUPS,
    ADMIN_OIDC_SUPERUSER_GROUPS,
    ADMIN_PASSWORD_LOGIN,
)
# mozilla-django-oidc's own settings, from the ones above.
OIDC_RP_CLIENT_ID = ADMIN_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = ADMIN_OIDC_CLIENT_SECRET
OIDC_RP_SCOPES = ADMIN_OIDC_SCOPES
OIDC_RP_SIGN_ALGO = "RS256"
OIDC_USE_PKCE = True
OIDC_USE_NONCE = True
OIDC_AUTHENTICATE_CLASS = "registry.access.staff.StaffSignInView"
OIDC_CALLBACK_CLASS = "registry.access.staff.StaffCallbackView"
LOGIN_REDIRECT_URL = "/admin/"
LOGIN_REDIRECT_URL_FAILURE = "/admin/login/?signin=failed"
# The password form's backend only while passwords are on; the identity provider's always
# (it signs nobody in while ADMIN_OIDC_ISSUER is empty).
AUTHENTICATION_BACKENDS = [
    *(["django.contrib.auth.backends.ModelBackend"] if ADMIN_PASSWORD_LOGIN else []),
    "registry.access.staff.StaffSignInBackend",
]

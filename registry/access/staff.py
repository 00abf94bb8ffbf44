"""Staff sign-in to the admin through an identity provider (``ADMIN_OIDC_ISSUER``): the
authorization code flow with PKCE and a nonce, by mozilla-django-oidc, its endpoints and
keys from the issuer's discovery document, every request to the issuer through the safe
fetcher, the ID token verified with PyJWT as the API's tokens are (``tokens``).

A user is the issuer's subject (``oidc:<sub>``), never matched by e-mail, so an address
at the provider cannot take over an account; staff and superuser status follow the ID
token's group claim at each sign-in (``ADMIN_OIDC_STAFF_GROUPS``,
``ADMIN_OIDC_SUPERUSER_GROUPS``), and a caller in neither group is not signed in. Each
sign-in and refusal is in the audit log."""

import hashlib
import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpResponseRedirect
from django.views.generic import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView
from rest_framework.exceptions import APIException

from registry.access.audit import audit_actor, audit_record
from registry.access.tokens import claims_verify, issuer_discovery, token_unverified
from registry.outbound.fetch import FetchError, fetch

logger = logging.getLogger(__name__)

USERNAME_PREFIX = "oidc:"
# The signature algorithms an ID token may use (asymmetric only; see settings/identity.py).
ID_TOKEN_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")


def staff_sign_in_enabled() -> bool:
    return bool(settings.ADMIN_OIDC_ISSUER)


def _endpoint(name: str) -> str:
    value = issuer_discovery(settings.ADMIN_OIDC_ISSUER).get(name)
    if not isinstance(value, str):
        raise SuspiciousOperation(f"The issuer's discovery document has no {name}.")
    return value


def staff_username(subject: str) -> str:
    """The user of an issuer's subject (a digest when the subject is long)."""
    name = USERNAME_PREFIX + subject
    if len(name) <= 150:
        return name
    return USERNAME_PREFIX + hashlib.sha256(subject.encode()).hexdigest()


def _groups(claims: dict) -> set[str]:
    value = claims.get(settings.ADMIN_OIDC_GROUPS_CLAIM)
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list):
        return set()
    return {group for group in values if isinstance(group, str)}


def admin_login(request):
    """The admin's sign-in page: the identity provider's button when staff sign in through
    it, the password form unless ADMIN_PASSWORD_LOGIN=0 (then a password is refused too)."""
    context = {
        "staff_sign_in": staff_sign_in_enabled(),
        "password_login": settings.ADMIN_PASSWORD_LOGIN,
        "signin_failed": request.GET.get("signin") == "failed",
    }
    if request.method == "POST" and not settings.ADMIN_PASSWORD_LOGIN:
        return HttpResponseRedirect(settings.LOGIN_REDIRECT_URL_FAILURE)
    return admin.site.login(request, extra_context=context)


class StaffSignInView(OIDCAuthenticationRequestView):
    """``GET /oidc/authenticate/``: to the issuer's authorization endpoint (its URL from
    the discovery document, read when asked, not at start-up)."""

    def __init__(self, *args, **kwargs):
        View.__init__(self, *args, **kwargs)

    def get(self, request):
        if not staff_sign_in_enabled():
            raise Http404("Staff sign-in through an identity provider is off.")
        self.OIDC_RP_CLIENT_ID = settings.ADMIN_OIDC_CLIENT_ID
        try:
            self.OIDC_OP_AUTH_ENDPOINT = _endpoint("authorization_endpoint")
        except APIException:
            return _failed(request, "the identity provider did not answer")
        return super().get(request)


class StaffCallbackView(OIDCAuthenticationCallbackView):
    """``GET /oidc/callback/``: the code exchanged, the user signed in or sent back to the
    admin's sign-in page saying it failed."""

    def get(self, request):
        if not staff_sign_in_enabled():
            raise Http404("Staff sign-in through an identity provider is off.")
        return super().get(request)


def _failed(request, why: str) -> HttpResponseRedirect:
    logger.warning("Staff sign-in failed: %s", why)
    return HttpResponseRedirect(settings.LOGIN_REDIRECT_URL_FAILURE)


class StaffSignInBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend, its network calls through the safe fetcher and its
    token check by PyJWT; users found by subject, their status from their groups."""

    def __init__(self, *args, **kwargs):
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.ADMIN_OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.ADMIN_OIDC_CLIENT_SECRET

    def authenticate(self, request, **kwargs):
        if not staff_sign_in_enabled() or request is None or "code" not in request.GET:
            return None  # the admin's password form, or no sign-in of ours
        try:
            return super().authenticate(request, **kwargs)
        except (APIException, FetchError, SuspiciousOperation, ValueError) as exc:
            logger.warning("Staff sign-in refused: %s", exc)
            return None

    def get_token(self, payload: dict) -> dict:
        """The authorization code exchanged at the token endpoint (a form POST; the client
        secret in it, ``client_secret_post``, or none for a public client)."""
        if not payload.get("client_secret"):
            payload = {name: value for name, value in payload.items() if name != "client_secret"}
        result = fetch(
            _endpoint("token_endpoint"),
            json_body=urlencode(payload).encode(),
            content_type="application/x-www-form-urlencoded",
            max_bytes=256 * 1024,
        )
        answer = result.json()
        if not isinstance(answer, dict) or not isinstance(answer.get("id_token"), str):
            raise SuspiciousOperation("The token endpoint gave no ID token.")
        return answer

    def verify_token(self, token: str, **kwargs) -> dict:
        """The ID token's claims: signature, issuer, audience (this client), times and the
        nonce of this sign-in."""
        header, _ = token_unverified(token)
        config = {
            "issuer": settings.ADMIN_OIDC_ISSUER,
            "audience": settings.ADMIN_OIDC_CLIENT_ID,
            "algorithms": ID_TOKEN_ALGORITHMS,
        }
        claims = claims_verify(token, header, config)
        if kwargs.get("nonce") is None or claims.get("nonce") != kwargs["nonce"]:
            raise SuspiciousOperation("The ID token's nonce is not this sign-in's.")
        return claims

    def get_userinfo(self, access_token, id_token, payload) -> dict:
        # The ID token's claims, verified: no further request to the issuer.
        return payload

    def verify_claims(self, claims: dict) -> bool:
        groups = _groups(claims)
        allowed = set(settings.ADMIN_OIDC_STAFF_GROUPS) | set(settings.ADMIN_OIDC_SUPERUSER_GROUPS)
        if not groups & allowed:
            audit_actor.set((staff_username(str(claims["sub"])), ""))
            audit_record(
                "staff.sign-in-refused",
                object_repr=str(claims["sub"]),
                after={"issuer": settings.ADMIN_OIDC_ISSUER, "subject": str(claims["sub"])},
            )
            return False
        return True

    def filter_users_by_claims(self, claims: dict):
        return self.UserModel.objects.filter(username=staff_username(str(claims["sub"])))

    def create_user(self, claims: dict):
        user = self.UserModel(username=staff_username(str(claims["sub"])))
        user.set_unusable_password()
        return self.update_user(user, claims)

    def update_user(self, user, claims: dict):
        groups = _groups(claims)
        user.is_superuser = bool(groups & set(settings.ADMIN_OIDC_SUPERUSER_GROUPS))
        user.is_staff = user.is_superuser or bool(groups & set(settings.ADMIN_OIDC_STAFF_GROUPS))
        email = claims.get("email")
        user.email = email if isinstance(email, str) and claims.get("email_verified") else ""
        user.save()
        audit_actor.set((user.username, ""))
        audit_record(
            "staff.sign-in",
            object_repr=user.username,
            after={
                "issuer": settings.ADMIN_OIDC_ISSUER,
                "subject": str(claims["sub"]),
                "staff": user.is_staff,
                "superuser": user.is_superuser,
                "groups": sorted(groups)[:50],
            },
        )
        return user

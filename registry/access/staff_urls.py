"""The URLs of the staff sign-in (``registry.access.staff``), whose views load
mozilla-django-oidc (and PyJWT and cryptography with it) on their first request, not when
a web worker starts: a worker that serves reads never imports them (tests/registry/
test_wsgi.py). The names are mozilla-django-oidc's own."""

import functools

from django.urls import path


@functools.cache
def _view(name: str):
    from mozilla_django_oidc import views

    from registry.access import staff

    found = {
        "callback": staff.StaffCallbackView,
        "authenticate": staff.StaffSignInView,
        "logout": views.OIDCLogoutView,
    }[name]
    return found.as_view()


def _loaded(name: str):
    def view(request, *args, **kwargs):
        return _view(name)(request, *args, **kwargs)

    return view


def admin_login(request):
    from registry.access import staff

    return staff.admin_login(request)


urlpatterns = [
    path("callback/", _loaded("callback"), name="oidc_authentication_callback"),
    path("authenticate/", _loaded("authenticate"), name="oidc_authentication_init"),
    path("logout/", _loaded("logout"), name="oidc_logout"),
]

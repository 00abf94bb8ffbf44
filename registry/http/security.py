"""What every response of an internet-facing registry carries, and the deployment checks
of ``manage.py check --deploy`` that Django does not make itself."""

from django.conf import settings
from django.core import checks

# No inline script or style anywhere: the pages' CSS and JavaScript are static files, and
# card fields shown in pages (hostile input) cannot run or restyle anything.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


class SecurityHeadersMiddleware:
    """A Content-Security-Policy on every HTML page (the admin's too), and a referrer
    policy on every response (Django's SecurityMiddleware sets nosniff and HSTS)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


@checks.register(checks.Tags.security, deploy=True)
def shared_rate_limits(app_configs, **kwargs):
    """Rate-limit counters are per process without a shared cache."""
    if settings.REDIS_URL:
        return []
    return [
        checks.Warning(
            "REDIS_URL is not set: rate limits are counted per worker process, so N "
            "workers allow N times each limit.",
            hint="Set REDIS_URL to share the rate-limit counters between workers.",
            id="registry.W001",
        )
    ]

"""``Link: <…/.well-known/ai-catalog.json>; rel="ai-catalog"`` on the registry's home page
and its own agent card, where browsing agents look for a catalog (AI Catalog §discovery)."""

from django.conf import settings

LINKED_PATHS = frozenset({"/", "/.well-known/agent-card.json", "/.well-known/agent.json"})


class CatalogLinkMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.link = (
            f'<{settings.REGISTRY_BASE_URL}/.well-known/ai-catalog.json>; rel="ai-catalog"; '
            'type="application/ai-catalog+json"'
        )

    def __call__(self, request):
        response = self.get_response(request)
        if request.path in LINKED_PATHS and response.status_code == 200:
            existing = response.get("Link")
            response["Link"] = f"{existing}, {self.link}" if existing else self.link
        return response

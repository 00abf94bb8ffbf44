"""The catalog documents (``/.well-known/ai-catalog.json``, ``/.well-known/ard.json``, the
nested pages) served as stored bytes, and the ARD search API's views
(``protocols.ard.search.api``)."""

from django.http import HttpRequest, HttpResponse
from django.utils.http import http_date
from django.views.decorators.http import require_safe

from protocols.ard.catalog.document import catalog_page
from registry.http.problems import problem_response

CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
CACHE_CONTROL = "public, max-age=60"


def _document(page, content_type: str) -> HttpResponse:
    response = HttpResponse(bytes(page.body), content_type=content_type)
    response["ETag"] = f'"{page.sha256}"'
    response["Last-Modified"] = http_date(page.built_at.timestamp())
    response["Cache-Control"] = CACHE_CONTROL
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_safe
def ai_catalog_view(request: HttpRequest) -> HttpResponse:
    return _document(catalog_page(0), CATALOG_MEDIA_TYPE)


@require_safe
def ard_manifest_view(request: HttpRequest) -> HttpResponse:
    # ARD v0.91's well-known name: the same document, as plain JSON.
    return _document(catalog_page(0), "application/json")


@require_safe
def catalog_page_view(request: HttpRequest, number: int) -> HttpResponse:
    page = catalog_page(number) if number > 0 else None
    if page is None:
        return problem_response(404, "not-found", f"The catalog has no page {number}.")
    return _document(page, CATALOG_MEDIA_TYPE)

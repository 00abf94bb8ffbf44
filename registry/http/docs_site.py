"""The documentation site at /docs/: the files `make docs` built into ``site/`` (MkDocs),
served as they are, ``index.html`` for a folder; a 404 saying how to build it when it is not
built. Paths are joined safely: nothing outside the built folder is ever served."""

from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import HttpResponseRedirect
from django.utils._os import safe_join
from django.views.decorators.http import require_safe
from django.views.static import serve

from registry.http.problems import problem_response

# The built site's pages carry small inline scripts and styles of the theme (its palette and
# search set-up): the site is built from the checkout, not from anything a client sent.
DOCS_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def docs_root() -> Path:
    return Path(getattr(settings, "DOCS_SITE_DIR", None) or settings.BASE_DIR / "site")


@require_safe
def docs_site(request, path: str = ""):
    root = docs_root()
    if not (root / "index.html").is_file():
        return problem_response(
            404, "not-found", "The documentation is not built here: run `make docs`."
        )
    try:
        target = Path(safe_join(root, path)) if path else root
    except SuspiciousFileOperation:
        return problem_response(404, "not-found", f"There is nothing at {request.path}.")
    if target.is_dir():
        if path and not path.endswith("/"):
            return HttpResponseRedirect(f"{request.path}/")
        path = f"{path}index.html"
    response = serve(request, path, document_root=str(root))
    response["Cache-Control"] = "public, max-age=300"
    if response.get("Content-Type", "").startswith("text/html"):
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
    return response

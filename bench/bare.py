"""The limit the benchmark compares with: a bare WSGI application answering constant JSON,
served by the same gunicorn, with the same workers, as the registry."""

BODY = b'{"status":"ok"}'
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]


def application(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]

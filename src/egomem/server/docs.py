"""The API docs page (/docs) served from an installed package, not a CDN: the service often runs
where nothing outside can be reached, and FastAPI's default page loads Swagger UI from a CDN,
which leaves it blank there. The Swagger UI files come from the `swagger-ui-bundle-v2` wheel
(5.x: renders the OpenAPI 3.1 FastAPI writes)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def swagger_ui_dir() -> Path | None:
    """The installed Swagger UI distribution, or None when the package is missing."""
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    path = Path(str(swagger_ui_bundle.swagger_ui_path))
    return path if (path / "swagger-ui-bundle.js").is_file() else None


def mount_docs(app: FastAPI) -> None:
    """/docs from local files (the app is created with docs_url=None, redoc_url=None)."""
    dist = swagger_ui_dir()
    if dist is not None:
        app.mount(ASSETS, StaticFiles(directory=dist), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if dist is None:
            return HTMLResponse(
                "<!doctype html><title>egomem API</title><p>The API docs page needs the "
                "<code>swagger-ui-bundle-v2</code> package (pip install swagger-ui-bundle-v2). "
                'The OpenAPI document itself is at <a href="/openapi.json">/openapi.json</a>.</p>',
                status_code=503,
            )
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )

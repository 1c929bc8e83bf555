"""Run the dashboard with a production WSGI server (waitress: threads, no dev server)."""

from __future__ import annotations

from ..settings import Settings


def run(settings: Settings, *, host: str = "127.0.0.1", port: int = 8099, threads: int = 8) -> None:
    """Serve the dashboard until interrupted."""
    import waitress

    from . import create_app

    app = create_app(settings)
    print(f"Memory Curator dashboard on http://{_display_host(host)}:{port}/ "
          f"(data in {settings.data_dir})", flush=True)
    waitress.serve(app, host=host, port=port, threads=threads, ident="memory-curator",
                   clear_untrusted_proxy_headers=True)


def _display_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

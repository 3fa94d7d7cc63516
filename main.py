"""Entry point of the packaged apps: `flet build` runs `main.py` at the project root.

From source the app starts with `python -m app` (scripts/run-app.sh), which serves the web UI;
a built app embeds its Flet client and runs the same `main(page)` through `ft.run`.
"""

if __name__ == "__main__":  # not in a worker child process (multiprocessing re-imports this module)
    from app.privacy.guard import ensure_installed

    ensure_installed()  # first, as in app.cli: nothing after this reaches the network unnoticed

    import flet as ft

    from app.ui.shell.app_main import build_app

    app = build_app()
    try:
        ft.run(app.main)
    finally:
        app.close()

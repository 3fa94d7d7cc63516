from app.stop_signals import run_command


def _main() -> int:
    from app.cli import main  # after the signal handling is in place: these imports take ~0.4 s

    return main()


raise SystemExit(run_command(_main))

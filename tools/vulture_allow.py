"""Names vulture cannot see used (tests/test_package.py::test_no_dead_code and pre-commit's vulture
read this file beside the package; nothing runs it).

Each is used where vulture does not look: by the standard library calling a protocol method, or by
the tests that hold a public piece of the package to its rule.
"""
# ruff: noqa: B018


class _Names:
    """Any attribute, so that each line below reads one name (vulture counts a read as a use)."""

    def __getattr__(self, name: str) -> object:
        return name


_ = _Names()

_.do_GET  # reports/live_view.py: http.server calls it
_.log_message  # reports/live_view.py: http.server calls it
_.handle_error  # reports/live_view.py: socketserver calls it
_.readinto  # reports/live_view.py: io's buffered reader calls it
_._split_lines  # cli/__init__.py: argparse's HelpFormatter calls it (help wrapped at spaces only)
_._fill_text  # cli/__init__.py: argparse's HelpFormatter calls it (help wrapped at spaces only)
_._print_message  # cli/__init__.py: argparse's ArgumentParser calls it (--help's write error not swallowed)
_.find_spec  # hooks/finder.py: the import system calls it (a finder on sys.meta_path)
_.create_module  # hooks/finder.py: the import system calls it (a loader)
_.exec_module  # hooks/finder.py: the import system calls it (a loader)
_.get_resource_reader  # hooks/finder.py: importlib.resources calls it (a loader of packages)
_.label_name  # otlp/promnames.py: the collector's label rule (tests/test_dashboard.py)
_.metric_name  # otlp/promnames.py: the collector's metric rule (tools/dashboard.py builds the dashboard by it)
_.handoff_command  # base/route.py: the route's one handoff command (tests/test_route.py)
_.call_usd  # core/prices_openai.py: one call's dollars with the 272K step (tests/test_codex_prices.py)
_.run_report_json  # reports/collect.py: the report as one JSON text (tests/test_report_text.py, bench/versus.py)
_.report_of_parts  # reports/warmth.py: the report from every part at once, what merge.py equals (tests/builders.py)
_.__getattr__  # base/sysos.py: the interpreter calls a module's own for a name it lacks (PEP 562)
_.dispatch  # notifier/__init__.py: send, then printed, in one call: the tests of both (the hooks call them apart)

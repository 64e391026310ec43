"""``ipcsim view OUT``: write a run's browser viewer (OUT/viewer.html, docs/viewer.md) and open it."""
from __future__ import annotations


def add_parser(sub, debug) -> None:
    view = sub.add_parser("view", parents=[debug], help="write a run's browser viewer (OUT/viewer.html) and open it",
                          description="Write OUT/viewer.html, one self-contained page that plays the run in a "
                                      "browser from disk, offline (docs/viewer.md), and open it in the browser.")
    view.add_argument("out", metavar="OUT", help="output directory of a run")
    view.add_argument("-o", "--output", metavar="FILE.html", help="the page (default OUT/viewer.html)")
    view.add_argument("--no-open", action="store_true", help="only write the page")
    view.set_defaults(func=command)


def command(args) -> int:
    from ..app.viewer import open_in_browser, write_viewer

    path = write_viewer(args.out, output=args.output)
    opened = args.no_open or open_in_browser(path)
    print(f"viewer: {path}" + ("" if opened else " (no browser found: open it yourself)"))
    return 0

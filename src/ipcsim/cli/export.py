"""``ipcsim export OUT --format usd|pvd|obj``: a run's frames as an animation (docs/export.md)."""
from __future__ import annotations


def add_parser(sub, debug) -> None:
    export = sub.add_parser("export", parents=[debug], help="export a run's frames as USD, ParaView PVD or OBJ",
                            description="Export a run's surface frames as an animation (docs/export.md): one USD "
                                        "stage (time-sampled mesh per body; needs usd-core), a ParaView collection "
                                        "(.pvd over VTU frames, times in seconds) or an OBJ sequence.")
    export.add_argument("out", metavar="OUT", help="output directory of a run")
    export.add_argument("--format", required=True, choices=("usd", "pvd", "obj"), help="usd, pvd or obj")
    export.add_argument("-o", "--output", metavar="PATH", help="the .usd/.usda/.usdc or .pvd file, or the OBJ "
                                                                "folder (default OUT/export/<scene name>.usd|.pvd, "
                                                                "OUT/export/obj)")
    export.add_argument("--up", choices=("y", "z"), default="y",
                        help="up axis of the export (default y, ipcsim's; z rotates (x, y, z) -> (x, -z, y))")
    export.set_defaults(func=command)


def command(args) -> int:
    from ..app.export import export_run

    written = export_run(args.out, args.format, output=args.output, up=args.up)
    print("export: " + ", ".join(str(p) for p in written))
    return 0

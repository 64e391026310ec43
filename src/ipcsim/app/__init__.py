"""The application around the simulator: the run loop into an output directory (``runner``), previews
(``render``, ``render_view``), plots (``plots``), the browser viewer (``viewer``), exports (``export``), scene
reports (``info``) and the up-front kernel compilation (``warmup``). The command line (``ipcsim.cli``) sits on top.
"""

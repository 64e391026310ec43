"""The built-in demos of ``ipcsim demo``: the JSON scenes shipped as package data (``builtin``), the teddy grasp
of 004 §IV-A (``teddy_grasp``, with Drake's set-up in ``grasp_paper``), the plate rack of 004 §IV-B
(``plate_rack``, its parts and scene in ``plate_rack_parts`` and ``plate_rack_scene``); the face demo lives in
``ipcsim.face.demo``. Every demo built in Python declares its own command-line options (``add_arguments``);
``builtin.BUILT_DEMO_MODULES`` lists those modules for the CLI.
"""

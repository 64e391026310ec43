"""Run output on disk: ``frames`` (atomic PLY/VTU/CSV/JSON writers and readers) and ``output`` (the output
directory's layout: frame paths, preparing OUT, listing frames). Imports nothing above ``ipcsim.runtime``, so the
face's runner and the app both write through it.
"""

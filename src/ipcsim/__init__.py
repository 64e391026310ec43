"""ipcsim: Incremental Potential Contact simulation of soft and stiff bodies."""
__version__ = "0.1.0"

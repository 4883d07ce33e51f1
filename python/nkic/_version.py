"""The one place nkic's version is written: nkic.__version__, `nkic --version` and the
package metadata (pyproject.toml reads it) all come from here."""
__version__ = "0.1.0"

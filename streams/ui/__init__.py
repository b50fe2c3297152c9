"""The live memory view (issue 23 item 1): server-rendered pages the reader mounts at ``/ui/``.

Entry point: :func:`create_ui_app` (streams/ui/app.py); the reader passes its token check in, so
the view sees exactly what the API's bearer tokens see.
"""

from streams.ui.app import create_ui_app
from streams.ui.render import PREFIX as UI_PREFIX

__all__ = ["UI_PREFIX", "create_ui_app"]

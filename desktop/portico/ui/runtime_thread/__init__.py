"""The app's code that runs on the runtime thread (beside the hub), never on the GUI thread.

Widgets reach it only through ``ui/facade.py``; what it hands back are plain frozen
snapshots (``snapshots.py``) that the GUI thread may read freely.
"""

"""The Qt face: qasync bootstrap, windows, dialogs, tray, item models, the Qt Prompter."""

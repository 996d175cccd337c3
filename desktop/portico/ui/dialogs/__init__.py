"""The Qt Prompter's dialogs: one module per question, all non-modal, all answering once."""

"""Renderers: the triage result as the terminal summary (``_terminal``), Markdown, HTML, a
drill-down (``_drill``) and JSON written while inputs are read (``_stream``). They read the
result model only, never a reader's input.
"""

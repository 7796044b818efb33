"""The render layer: a record shown to people.

Holds the user, developer and JSON renderers, severity visibility and the gettext catalogs
(``locale/``). It may use the record, signature and codes layers; it never decides anything.
"""

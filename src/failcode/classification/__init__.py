"""The classification layer: raw failures in, coded records out.

Holds the exception classifier (builtins, OSError by errno, provider SDKs by duck typing,
pydantic), the provider response tables, the command classifier and the real tools' output
parsers. It may use the record, signature and codes layers. (Named ``classification``, not
``classify``: a subpackage named like the :func:`failcode.classify` function would replace that
attribute when imported.)
"""

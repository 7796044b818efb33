"""Optional integrations, one module per SDK or framework, each imported only when used.

``import failcode`` imports none of them. Each module imports its SDK at the top, so importing
the module without the SDK installed fails with ImportError naming the extra to install:

=====================================  ================  ======================================
module                                 extra             gives
=====================================  ================  ======================================
``failcode.integrations.fastapi``      ``fastapi``       RFC 9457 exception handlers
``failcode.integrations.otel``         ``otel``          span status and ``error.type``
``failcode.integrations.logs``         (none)            logging.Filter, structlog processor
``failcode.integrations.sentry``       ``sentry``        ``before_send``: fingerprint and tags
``failcode.integrations.artifact``     ``crypto``        encrypted developer artifacts
=====================================  ================  ======================================

Each may use every layer up to the boundaries, never the pipeline, triage or the CLI.
"""

"""A serving engine's own context check, relayed by a gateway (cannot run here: the text is
the engine's, as OpenRouter returned it to aider in the second corpus)."""

from __future__ import annotations

from failcode import FC
from failcode.classification._classify import classify_text


def test_a_prompt_longer_than_the_engine_allows_is_the_context_window() -> None:
    """"The sum of prompt length (N) ... should not exceed max_num_tokens (M)": FC-PROV-006,
    whatever status the gateway wrapped it in."""
    text = ('APIError: OpenrouterException - Message: ConnectionError: {"object":"error",'
            '"message":"The sum of prompt length (82013.0), query length (0) should not exceed '
            'max_num_tokens (32768)","type":"BadRequestError","param":null,"code":400}')
    failure = classify_text("litellm.APIError", text)
    assert failure.code == FC.PROV_CONTEXT_TOO_LARGE.value

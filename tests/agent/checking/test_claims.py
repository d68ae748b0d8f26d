"""What a draft claims that execution can check: its Python blocks, the output it says they print, its final number."""

from __future__ import annotations

from ghost_agent.agent.checking.claims import code_claim, final_number, python_blocks


def test_python_blocks_are_the_closed_python_fences_and_untagged_code() -> None:
    draft = ("Code:\n```python\nx = 6 * 7\n```\n```bash\nls\n```\n```\nprint(x)\n```\n```\njust words\n```\n"
             "  ```py3\n  y = 1\n  ```\n")
    assert python_blocks(draft) == ["x = 6 * 7\n", "print(x)\n", "  y = 1\n"]
    assert python_blocks("```python\nprint(1)\n") == []  # cut off: no closing line, no block
    assert python_blocks("Inline ```python\nprint(1)\n```") == []  # Markdown: the fence starts its line


def test_the_claimed_output_is_the_output_fence_after_the_last_python_block() -> None:
    claim = code_claim("```python\nprint(6 * 7)\n```\nOutput:\n```text\n42\n```\nSo 42.")
    assert claim is not None and claim.program == "print(6 * 7)" and claim.claimed_output == "42" and claim.prints
    inline = code_claim("```python\nprint(6 * 7)\n```\n**Output:** 42")
    assert inline is not None and inline.claimed_output == "42"


def test_the_final_number_ignores_numbers_inside_code() -> None:
    assert final_number("```python\nx = 99\n```\nThe result is 7.") == 7
    assert final_number("Answer: 12\n```\n99\n```") == 12

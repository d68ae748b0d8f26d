"""The small text helpers every layer may use: one of each.

- `prompts`: the prompt loader (prompts are data files in `ghost_agent/prompts/`) and chat-message rendering;
- `fences`: the fenced code blocks of a reply (Markdown, inline and one-line fences; unclosed, language-filtered);
- `lenient_json`: every JSON value a small model's reply holds, fences and prose around it or not;
- `words`: content tokens (stopwords dropped) and their overlap.

Nothing here imports another ghost_agent package.
"""

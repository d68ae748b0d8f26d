"""The small text helpers every layer may use: one of each.

- `prompts`: the prompt loader (prompts are data files in `ghost_agent/prompts/`) and chat-message rendering;
- `fences`: the fenced code blocks of a reply (Markdown, inline and one-line fences; unclosed, language-filtered);
- `lenient_json`: every JSON value a small model's reply holds, fences and prose around it or not;
- `words`: content tokens (stopwords dropped) and their overlap;
- `request_kind`: what form of answer a request wants (code, a computed number, files), decided by the small
  learned model of `kind_model` (weights in `data/`) with regex signals as its evidence.

Nothing here imports another ghost_agent package.
"""

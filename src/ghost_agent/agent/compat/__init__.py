"""OpenAI-compatibility adapters around a turn: `client_tools` and `tool_call_parse` (a client's `tools` as
native `tool_calls`, whatever text the model wrote), `structured` (`response_format` validated and repaired),
`streaming` (an agent turn as well-formed SSE chunks), `notes_echo` (a streamed reply without an echoed notes
block)."""

"""Answer checking: what the answer-first strategy (`answer_first`) does after drafting like the bare model.

`claims` (what a draft claims that execution can check), `code_tests` and `code_program` (the draft's code run
against the request's examples in the sandbox), `form_detect` and `form` (the requested output form, checked
and fixed), `preferences` (one guarded rewrite to follow the user's stated preference).
"""

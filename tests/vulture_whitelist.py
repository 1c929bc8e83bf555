"""Names vulture cannot see used, for the dead-code check in test_code_quality.py.

Keep this short: code nothing uses is removed, not listed here. Each name below is used, but
by something vulture does not read (Jinja templates, a framework, a host program, a test).
"""

# ruff: noqa: B018
from types import SimpleNamespace

_ = SimpleNamespace()

# Fields read only by Jinja templates (templates/), by name.
_.trimmed  # ConversationSummary: conversations/_thread.html
_.expires  # ConversationRow: conversations/_thread.html
_.ok  # ExtractOutcome: conversations/_extract_result.html
_.llm_problems  # BatchProgress: conversations/_extract_all.html
_.decided_by  # ReviewItem: review/_decided.html
_.empty  # DerivedChanges: conversations/_derived.html
_.edit  # RowLinks: the memory rows' Edit link
_.sort_label  # MemoryListing: the Sort menu
_.checked_by  # Finding, AttentionReport: attention/_finding.html, _panel.html
_.by_model_only  # Finding: attention/_finding.html
_.notice_level  # AttentionPage, ReviewPage, SkillsPage: the notice's style
_.approved_by, _.approved_at, _.imported_from, _.edited_by, _.edited_at  # Provenance
_.live_count, _.deprecated_count, _.skill_count  # SkillsPage: the tab counts
_.import_error, _.plan_token, _.plan_file  # SkillsPage: the import form

# Public library API docs/library.md documents for host programs.
_.full, _.warn  # MemoryUsage
_.deleted_by  # DeletedMemory
_.export_runtime  # SkillStore

# Read by a framework.
_.session_interface  # Flask: the per-path session cookie (web/security.py)
_.response_class  # Flask: the UTF-8 safe response (web/security.py)
_.get_cookie_name  # Flask SessionInterface: the override that names the cookie
_.direct_passthrough  # Werkzeug Response: off so a streamed asset can be compressed
_._memory_curator_translations  # flask.g, read back with g.get("_memory_curator_translations")
# MemoryTool.run calls its actions by name: getattr(self, f"do_{action}")
_.do_add, _.do_list, _.do_search, _.do_update, _.do_delete

# Used by the tests only: hooks for checking state the app does not need to read.
_.apply  # MemoryExtractor: write reconcile actions directly
# The seed's extraction names, for host programs (tests/test_seed_contracts.py); the runs
# use LlmMemoryExtractor.extract and MemoryExtractor.extract.
_.extract_candidates, _.extract_candidates_smartly  # MemoryExtractor
_.history_path  # MemoryStore: where the history log is
_.failures  # LoginThrottle: failed attempts in the window
_.discard_staged  # SkillStore: forget a staged upload
_.OPTION_ENV_VARS  # settings: the add-on options Settings reads
_.data_folder  # Settings: MEMORY_DATA_DIR as read (`memory-curator settings` prints it)
_.all_codes  # CodedError: every code a class may carry (each must have a message)
_.forgotten_at  # Tombstone: shown by the review template (Delete forever time)
_.purge  # MemoryStore: delete for good without a fingerprint (library API for host programs)
_.poll_url  # AttentionPage: where the progress paragraph asks again (templates/attention/_panel.html)
_.STEPS  # curator.wiping: the steps of Delete forever, named for the crash tests (tests/test_forgotten_gone.py)
_.line_of  # ImportPlan: the line an action comes from (templates/bring/_panel.html)
# webapp.web.plumbing.guard: what waitress calls or reads on its server, channel and adjustments
_.parser_class  # HTTPChannel.received makes each request's parser with it
_.handle_accept  # wasyncore calls it when a connection waits to be accepted
_.will_close  # HTTPChannel closes the connection when it is set
_.max_request_body_size  # HTTPRequestParser reads it from the adjustments

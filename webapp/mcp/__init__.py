"""The MCP door: the ``manage_memory`` and ``recall`` tools over stdio (``server``, started by
``memory-curator mcp``) and over HTTP on the dashboard's own server (``http``); ``words`` is how
a memory is worded for the model, ``recall`` the read-only prompt block."""

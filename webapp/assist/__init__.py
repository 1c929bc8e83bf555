"""The Assist door: the API the Home Assistant integration ``memory_curator`` calls (``http``,
version 1, on the dashboard's own server; its rules are ``webapp.curator.assist``)."""

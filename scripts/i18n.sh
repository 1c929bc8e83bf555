#!/usr/bin/env bash
# Keep the dashboard's message catalogs in step with the code:
#   scripts/i18n.sh            extract every message (templates, Python views, JavaScript) into
#                              webapp/locales/messages.pot, merge it into each language's .po
#                              (new messages arrive empty), and compile the .mo files
#   scripts/i18n.sh compile    only compile the .po files (after translating)
# tests/web/test_i18n.py fails while a zh_Hant or zh_Hans message is missing or fuzzy.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
locales=webapp/locales
if [ "${1:-}" != compile ]; then
  "$bin/pybabel" -q extract -F babel.cfg -k _l --no-location --sort-output \
    --project "Memory Curator" --copyright-holder "Memory Curator developers" \
    -o "$locales/messages.pot" .
  for lang in zh_Hant zh_Hans; do
    if [ -f "$locales/$lang/LC_MESSAGES/messages.po" ]; then
      "$bin/pybabel" -q update --no-fuzzy-matching --ignore-obsolete \
        -i "$locales/messages.pot" -d "$locales" -l "$lang"
    else
      "$bin/pybabel" -q init -i "$locales/messages.pot" -d "$locales" -l "$lang"
    fi
  done
fi
"$bin/pybabel" compile -d "$locales" --statistics
